// The probe-cost table: its cache file round trip, where the cache lives, which
// figure a recording gets, and the per-site line `uprof record` prints.
#include "uprof/calibrate/probe_cost.h"

#include <gtest/gtest.h>

#include "uprof/calibrate/probe_sites.h"

namespace uprof {
namespace {

// Perf figures as measured here before the BPF engine, and BPF ones beside them for
// the single-stepped class only.
ProbeCostTable sample_table() {
  ProbeCostTable t;
  t.kernel = "6.18.0-1-amd64";
  t.boot_id = "3f0c2d6e-aaaa-bbbb-cccc-0123456789ab";
  t.unprobed_ns = 1.5;
  t.of(EngineKind::Perf, InsnClass::SingleStepped) = {.measured = true, .insn = "lea (48 8d 04 37)",
                                                      .entry_ns = 2950, .return_ns = 1800, .call_ns = 4800,
                                                      .inside_ns = 2100};
  t.of(EngineKind::Perf, InsnClass::Emulated) = {.measured = true, .insn = "push %rbp", .entry_ns = 520,
                                                 .return_ns = 450, .call_ns = 1000, .inside_ns = 600};
  t.of(EngineKind::Bpf, InsnClass::SingleStepped) = {.measured = true, .insn = "lea (48 8d 04 37)",
                                                     .entry_ns = 2500, .return_ns = 1500, .call_ns = 4000,
                                                     .inside_ns = 1900};
  return t;
}

TEST(ProbeCost, TextRoundTrip) {
  ProbeCostTable t = sample_table();
  auto back = parse_probe_costs(to_text(t));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->kernel, t.kernel);
  EXPECT_EQ(back->boot_id, t.boot_id);
  EXPECT_EQ(back->arch, Arch::X86_64);
  EXPECT_DOUBLE_EQ(back->unprobed_ns, 1.5);
  const ClassCost* e = back->find(EngineKind::Perf, InsnClass::Emulated);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->insn, "push %rbp");
  EXPECT_DOUBLE_EQ(e->entry_ns, 520);
  EXPECT_DOUBLE_EQ(e->call_ns, 1000);
  EXPECT_EQ(e->inside_ns, 600u);
  EXPECT_EQ(back->find(EngineKind::Perf, InsnClass::SingleStepped)->insn, "lea (48 8d 04 37)");
  EXPECT_EQ(back->find(EngineKind::Perf, InsnClass::Optimized), nullptr);
  // Each engine keeps its own figures.
  const ClassCost* b = back->find(EngineKind::Bpf, InsnClass::SingleStepped);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->inside_ns, 1900u);
  EXPECT_DOUBLE_EQ(b->call_ns, 4000);
  EXPECT_EQ(back->find(EngineKind::Perf, InsnClass::SingleStepped)->inside_ns, 2100u);
  EXPECT_EQ(back->find(EngineKind::Bpf, InsnClass::Emulated), nullptr);
}

TEST(ProbeCost, EveryClassLineNamesItsEngine) {
  std::string text = to_text(sample_table());
  EXPECT_NE(text.find("\nclass bpf single-stepped lea%20(48%208d%2004%2037) entry_ns 2500 "), std::string::npos) << text;
  EXPECT_NE(text.find("\nclass perf single-stepped lea%20(48%208d%2004%2037) entry_ns 2950 "), std::string::npos)
      << text;
  EXPECT_NE(text.find("\nclass perf emulated push%20%rbp entry_ns 520 return_ns 450 call_ns 1000 inside_ns 600\n"),
            std::string::npos)
      << text;
}

// What a uprof that measured the perf engine alone wrote (e7d1ab1 and before):
// class lines without an engine. They are the perf engine's.
TEST(ProbeCost, AClassLineWithoutAnEngineIsThePerfEngines) {
  auto t = parse_probe_costs(
      "uprof-probe-cost 1\n"
      "kernel 6.18.0-1-amd64\n"
      "boot_id 3f0c2d6e-aaaa-bbbb-cccc-0123456789ab\n"
      "arch x86_64\n"
      "unprobed_ns 1.6\n"
      "class single-stepped lea%20(48%208d%2004%2037) entry_ns 16642 return_ns 16418 call_ns 17987 inside_ns 15328\n"
      "class emulated push%20%rbp entry_ns 1572 return_ns 2241 call_ns 2718 inside_ns 1132\n");
  ASSERT_TRUE(t.ok()) << t.error().message;
  const ClassCost* e = t->find(EngineKind::Perf, InsnClass::Emulated);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->insn, "push %rbp");
  EXPECT_DOUBLE_EQ(e->return_ns, 2241);
  EXPECT_EQ(e->inside_ns, 1132u);
  EXPECT_EQ(t->find(EngineKind::Perf, InsnClass::SingleStepped)->inside_ns, 15328u);
  EXPECT_FALSE(t->engine(EngineKind::Bpf).any());
  // Written back, the lines name the engine.
  EXPECT_NE(to_text(*t).find("\nclass perf emulated push%20%rbp "), std::string::npos);
}

TEST(ProbeCost, RejectsDamage) {
  EXPECT_FALSE(parse_probe_costs("").ok());
  EXPECT_FALSE(parse_probe_costs("something else\n").ok());
  EXPECT_FALSE(parse_probe_costs("uprof-probe-cost 1\nclass nonsense x entry_ns 1\n").ok());
  EXPECT_FALSE(parse_probe_costs("uprof-probe-cost 1\nclass emulated x entry_ns -5\n").ok());
  EXPECT_FALSE(parse_probe_costs("uprof-probe-cost 1\nclass bpf\n").ok());
  EXPECT_FALSE(parse_probe_costs("uprof-probe-cost 1\nclass bpf emulated\n").ok());
  EXPECT_FALSE(parse_probe_costs("uprof-probe-cost 1\nclass bpf nonsense x entry_ns 1\n").ok());
  EXPECT_FALSE(parse_probe_costs("uprof-probe-cost 1\nclass auto emulated x entry_ns 1\n").ok());
  EXPECT_FALSE(parse_probe_costs("uprof-probe-cost 1\nclass perf emulated x entry_ns nan\n").ok());
  // Keys from a newer uprof are skipped.
  EXPECT_TRUE(parse_probe_costs("uprof-probe-cost 1\nfuture 1\nclass emulated x entry_ns 5 later_ns 7\n").ok());
  EXPECT_TRUE(parse_probe_costs("uprof-probe-cost 1\nclass bpf emulated x entry_ns 5 later_ns 7\n").ok());
}

TEST(ProbeCost, CachePath) {
  EXPECT_EQ(probe_cost_cache_path("6.18.0", "/tmp/xdg", "/home/u", false), "/tmp/xdg/uprof/probe-cost-6.18.0");
  EXPECT_EQ(probe_cost_cache_path("6.18.0", "/tmp/xdg", "/root", true), "/tmp/xdg/uprof/probe-cost-6.18.0");
  EXPECT_EQ(probe_cost_cache_path("6.18.0", nullptr, "/root", true), "/var/cache/uprof/probe-cost-6.18.0");
  // A user reads root's figures after its own; an XDG_CACHE_HOME is the only place.
  EXPECT_EQ(probe_cost_read_paths("6.18.0", nullptr, "/home/u", false),
            (std::vector<std::string>{"/home/u/.cache/uprof/probe-cost-6.18.0", "/var/cache/uprof/probe-cost-6.18.0"}));
  EXPECT_EQ(probe_cost_read_paths("6.18.0", nullptr, "/root", true),
            (std::vector<std::string>{"/var/cache/uprof/probe-cost-6.18.0"}));
  EXPECT_EQ(probe_cost_read_paths("6.18.0", "/tmp/xdg", "/home/u", false),
            (std::vector<std::string>{"/tmp/xdg/uprof/probe-cost-6.18.0"}));
  EXPECT_EQ(probe_cost_cache_path("6.18.0", "", "/home/u", false), "/home/u/.cache/uprof/probe-cost-6.18.0");
}

TEST(ProbeCost, RecordMeasuresOnlyTheClassesTheCacheLacksForItsEngine) {
  ProbeCostTable t = sample_table();  // perf: single-stepped and emulated; bpf: single-stepped
  InsnClass needed[] = {InsnClass::Optimized, InsnClass::Emulated, InsnClass::Rejected, InsnClass::Optimized};
  EXPECT_EQ(unmeasured_classes(&t, EngineKind::Perf, needed), std::vector<InsnClass>{InsnClass::Optimized});
  EXPECT_EQ(unmeasured_classes(&t, EngineKind::Bpf, needed),
            (std::vector<InsnClass>{InsnClass::Emulated, InsnClass::Optimized}));
  InsnClass cached[] = {InsnClass::SingleStepped, InsnClass::Emulated};
  EXPECT_TRUE(unmeasured_classes(&t, EngineKind::Perf, cached).empty());
  EXPECT_EQ(unmeasured_classes(&t, EngineKind::Bpf, cached), std::vector<InsnClass>{InsnClass::Emulated});
  // No cache: every measurable class asked for; a rejected probe has nothing to measure.
  EXPECT_EQ(unmeasured_classes(nullptr, EngineKind::Bpf, needed),
            (std::vector<InsnClass>{InsnClass::Emulated, InsnClass::Optimized}));
  EXPECT_TRUE(unmeasured_classes(nullptr, EngineKind::Perf, {}).empty());
}

TEST(ProbeCost, AQuickMeasurementAddsToTheCachedTable) {
  ProbeCostTable cached = sample_table();
  ProbeCostTable fresh;
  fresh.kernel = cached.kernel;
  fresh.boot_id = cached.boot_id;
  fresh.unprobed_ns = 1.7;
  fresh.of(EngineKind::Perf, InsnClass::Optimized) = {.measured = true, .insn = "nop5", .entry_ns = 300,
                                                      .return_ns = 900, .call_ns = 1300, .inside_ns = 700};
  fresh.of(EngineKind::Perf, InsnClass::Emulated) = {.measured = true, .insn = "push %rbp", .entry_ns = 530,
                                                     .return_ns = 460, .call_ns = 1010, .inside_ns = 610};
  merge_probe_costs(cached, fresh);
  EXPECT_EQ(cached.find(EngineKind::Perf, InsnClass::SingleStepped)->inside_ns, 2100u);  // kept
  EXPECT_EQ(cached.find(EngineKind::Perf, InsnClass::Emulated)->inside_ns, 610u);        // replaced
  EXPECT_EQ(cached.find(EngineKind::Perf, InsnClass::Optimized)->inside_ns, 700u);       // added
  EXPECT_EQ(cached.find(EngineKind::Bpf, InsnClass::SingleStepped)->inside_ns, 1900u);   // the other engine: kept
  EXPECT_EQ(cached.find(EngineKind::Bpf, InsnClass::Optimized), nullptr);                // and not filled in
  EXPECT_DOUBLE_EQ(cached.unprobed_ns, 1.7);

  // A BPF measurement replaces only BPF figures.
  ProbeCostTable bpf;
  bpf.kernel = cached.kernel;
  bpf.boot_id = cached.boot_id;
  bpf.of(EngineKind::Bpf, InsnClass::SingleStepped) = {.measured = true, .insn = "lea", .entry_ns = 2400,
                                                       .return_ns = 1400, .call_ns = 3900, .inside_ns = 1800};
  merge_probe_costs(cached, bpf);
  EXPECT_EQ(cached.find(EngineKind::Bpf, InsnClass::SingleStepped)->inside_ns, 1800u);
  EXPECT_EQ(cached.find(EngineKind::Perf, InsnClass::SingleStepped)->inside_ns, 2100u);
  EXPECT_DOUBLE_EQ(cached.unprobed_ns, 1.7);  // bpf had none

  ProbeCostTable empty;  // no cache: the measurement is the table
  merge_probe_costs(empty, fresh);
  EXPECT_EQ(empty.kernel, fresh.kernel);
  EXPECT_EQ(empty.boot_id, fresh.boot_id);
  EXPECT_EQ(empty.find(EngineKind::Perf, InsnClass::SingleStepped), nullptr);
  EXPECT_EQ(empty.find(EngineKind::Perf, InsnClass::Optimized)->call_ns, 1300);
  EXPECT_FALSE(empty.engine(EngineKind::Bpf).any());
}

TEST(ProbeCost, RenderedTableNamesEveryMeasuredClassWithItsEnginesSideBySide) {
  std::string s = render_probe_costs(sample_table());
  EXPECT_NE(s.find("ENGINE"), std::string::npos) << s;
  // The class is named once, on its first engine's row; the next row is the other engine's.
  auto step = s.find("single-stepped (lea (48 8d 04 37))  bpf ");
  ASSERT_NE(step, std::string::npos) << s;
  auto next = s.find('\n', step) + 1;
  std::string row = s.substr(next, s.find('\n', next) - next);
  EXPECT_EQ(row.substr(row.find_first_not_of(' '), 5), "perf ") << s;
  EXPECT_NE(s.find("emulated (push %rbp)", next), std::string::npos) << s;
  auto emulated = s.find("emulated (push %rbp)");
  std::string rest = s.substr(emulated + 20, s.find('\n', emulated) - emulated - 20);
  EXPECT_EQ(rest.substr(rest.find_first_not_of(' '), 5), "perf ") << s;  // it has no bpf figures
  EXPECT_EQ(s.find("optimized"), std::string::npos) << s;
  EXPECT_NE(s.find(" 1900\n"), std::string::npos) << s;
  EXPECT_NE(s.find(" 2100\n"), std::string::npos) << s;

  std::string perf = render_probe_costs(sample_table(), EngineKind::Perf);
  EXPECT_EQ(perf.find(" bpf "), std::string::npos) << perf;
  EXPECT_NE(perf.find("single-stepped (lea (48 8d 04 37))  perf "), std::string::npos) << perf;
  std::string bpf = render_probe_costs(sample_table(), EngineKind::Bpf);
  EXPECT_EQ(bpf.find(" perf "), std::string::npos) << bpf;
  EXPECT_EQ(bpf.find("emulated"), std::string::npos) << bpf;
}

TEST(ProbeSites, OneLineListsFewSitesAndCountsMany) {
  std::vector<ProbeSite> sites{{"add", {InsnClass::Emulated, "push %rbp", ""}, "/bin/t", 0x1000},
                               {"mul", {InsnClass::Optimized, "nop5", ""}, "/bin/t", 0x1100}};
  EXPECT_EQ(render_probe_sites(sites), "uprof: first instructions: add emulated (push %rbp), mul optimized (nop5)");
  for (int i = 0; i < 4; i++) sites.push_back({"f" + std::to_string(i), {InsnClass::SingleStepped, "lea", ""}, "/bin/t", 0x2000u + i});
  EXPECT_EQ(render_probe_sites(sites),
            "uprof: first instructions: 4 single-stepped, 1 emulated, 1 optimized ('uprof probe BIN FUNC' shows each)");
  EXPECT_EQ(render_probe_sites({}), "");

  // With what each site's probes cost per call: per site, or the range per class.
  sites[0].cost_ns = 2'700;
  sites[1].cost_ns = 1'300;
  sites[2].cost_ns = 14'600;
  sites[3].cost_ns = 14'600;
  sites[4].cost_ns = 2'950;
  EXPECT_EQ(render_probe_sites(sites, 2),
            "uprof: first instructions: 4 single-stepped (+2.95us to +14.6us a call), 1 emulated (+2.70us a call), "
            "1 optimized (+1.30us a call) ('uprof probe BIN FUNC' shows each)");
  sites.resize(3);
  EXPECT_EQ(render_probe_sites(sites),
            "uprof: first instructions: add emulated (push %rbp) +2.70us a call, mul optimized (nop5) +1.30us a call, "
            "f0 single-stepped (lea) +14.6us a call");
}

// A site's cost per call is what its probes add to a measured call (the report's
// figure): shared by add's entry and return probe, mul's entry alone; a probe on no
// site sets nothing.
TEST(ProbeSites, SiteCostsAreWhatTheirProbesAddToACall) {
  std::vector<ProbeSite> sites{{"add", {InsnClass::Emulated, "push %rbp", ""}, "/bin/t", 0x1000},
                               {"mul", {InsnClass::SingleStepped, "lea", ""}, "/bin/t", 0x1100}};
  std::vector<ProbeInfo> probes(4);
  probes[0].path = probes[1].path = probes[2].path = "/bin/t";
  probes[3].path = "/lib/other.so";
  probes[0].file_offset = probes[1].file_offset = 0x1000;
  probes[2].file_offset = 0x1100;
  probes[3].file_offset = 0x1000;
  set_site_costs(sites, probes, {700, 700, 2950, 99});
  EXPECT_EQ(sites[0].cost_ns, 700u);
  EXPECT_EQ(sites[1].cost_ns, 2950u);
}

// Each probe gets the cost of its own instruction's class: an entry and a return probe on
// one function share it, and a probe whose class was not measured (or whose file could
// not be read, so it has no site) gets 0, never another class's figure.
TEST(ProbeSites, PerProbeCostsFollowEachProbesInstruction) {
  std::vector<ProbeSite> sites{{"add", {InsnClass::Emulated, "push %rbp", ""}, "/bin/t", 0x1000},
                               {"mul", {InsnClass::SingleStepped, "lea", ""}, "/bin/t", 0x1100},
                               {"nop", {InsnClass::Optimized, "nop5", ""}, "/bin/t", 0x1200}};
  auto probe_at = [](ProbeKind k, const std::string& path, uint64_t off) {
    ProbeInfo p;
    p.kind = k;
    p.path = path;
    p.file_offset = off;
    return p;
  };
  std::vector<ProbeInfo> probes{probe_at(ProbeKind::Entry, "/bin/t", 0x1000), probe_at(ProbeKind::Return, "/bin/t", 0x1000),
                                probe_at(ProbeKind::Entry, "/bin/t", 0x1100), probe_at(ProbeKind::Entry, "/bin/t", 0x1200),
                                probe_at(ProbeKind::Entry, "/lib/other.so", 0x1000)};
  EXPECT_EQ(probe_costs_for(sample_table().engine(EngineKind::Perf), probes, sites),
            (std::vector<uint64_t>{600, 600, 2100, 0, 0}));
  // The BPF engine's figures where the recording is the BPF engine's: it has no
  // emulated figure, and the perf engine's is not taken instead.
  EXPECT_EQ(probe_costs_for(sample_table().engine(EngineKind::Bpf), probes, sites),
            (std::vector<uint64_t>{0, 0, 1900, 0, 0}));
}

// What one hit costs in all, for the calls open around it: half the entry + return
// figure for each probe of a function probed at both ends, the entry or the return
// figure for a probe that does not pair, 0 for an unmeasured class or a missing site.
TEST(ProbeSites, HitCostsFollowEachProbesRole) {
  std::vector<ProbeSite> sites{{"add", {InsnClass::Emulated, "push %rbp", ""}, "/bin/t", 0x1000},
                               {"mul", {InsnClass::SingleStepped, "lea", ""}, "/bin/t", 0x1100},
                               {"nop", {InsnClass::Optimized, "nop5", ""}, "/bin/t", 0x1200},
                               {"div", {InsnClass::SingleStepped, "lea", ""}, "/bin/t", 0x1300}};
  std::vector<ProbeInfo> probes;
  auto add = [&](ProbeKind k, const std::string& fn, const std::string& path, uint64_t off) {
    ProbeInfo p;
    p.index = static_cast<uint32_t>(probes.size());
    p.kind = k;
    p.function = fn;
    p.path = path;
    p.file_offset = off;
    p.vaddr = off;
    probes.push_back(p);
  };
  add(ProbeKind::Entry, "add", "/bin/t", 0x1000);
  add(ProbeKind::Return, "add", "/bin/t", 0x1000);
  add(ProbeKind::Entry, "mul", "/bin/t", 0x1100);   // entry only
  add(ProbeKind::Return, "div", "/bin/t", 0x1300);  // return only
  add(ProbeKind::Entry, "nop", "/bin/t", 0x1200);   // optimized: not in the table
  add(ProbeKind::Entry, "f", "/lib/other.so", 0x1000);
  EXPECT_EQ(probe_hit_costs_for(sample_table().engine(EngineKind::Perf), probes, sites),
            (std::vector<uint64_t>{500, 500, 2950, 1800, 0, 0}));
}

}  // namespace
}  // namespace uprof
