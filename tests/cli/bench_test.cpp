// `uprof bench` on the real kernel, both engines, then what it feeds: the figures of the
// engine `uprof record` records with, stored in META, and what `uprof report
// --compensate` takes off. Only what is robust on a loaded VM is asserted: every figure
// positive and below a millisecond; no ordering between the classes or the engines.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/test_support.h"
#include "uprof/analyse/report_model.h"
#include "uprof/calibrate/probe_cost.h"
#include "uprof/present/report_text.h"
#include "uprof/store/data_file.h"

namespace uprof {
namespace {

using test::fixture;
using test::run_shell;
using test::uprof_binary;

#define REQUIRE_ROOT_UPROBES()                                                                         \
  do {                                                                                                 \
    if (!std::filesystem::exists("/sys/kernel/tracing/uprobe_events") &&                               \
        !std::filesystem::exists("/sys/kernel/debug/tracing/uprobe_events"))                           \
      GTEST_SKIP() << "no tracefs uprobe_events (the kernel needs CONFIG_UPROBE_EVENTS)";             \
    UPROF_REQUIRE_ROOT();                                                                              \
  } while (0)

TEST(BenchCli, MeasuresStoresAndCompensates) {
  REQUIRE_ROOT_UPROBES();
  test::TempDir dir;
  std::string env = "XDG_CACHE_HOME=" + dir.path() + " ";

  // Nothing cached yet, and --no-calibrate: record stores no cost, and --compensate says
  // what to do.
  auto r0 = run_shell(env + uprof_binary() + " record --no-calibrate -o " + dir.file("a.data") + " -e add -- " +
                      fixture("x86_64", "workload") + " calls 100");
  ASSERT_EQ(r0.exit_code, 0) << r0.err;
  EXPECT_NE(r0.err.find("first instructions: add "), std::string::npos) << r0.err;
  EXPECT_EQ(r0.err.find("measuring"), std::string::npos) << r0.err;
  auto c0 = run_shell(env + uprof_binary() + " report --compensate " + dir.file("a.data"));
  EXPECT_NE(c0.exit_code, 0);
  EXPECT_NE(c0.err.find("uprof bench"), std::string::npos) << c0.err;

  // Without it, record measures the one class its probe needs (add starts with lea) with
  // the engine it records with (bpf where the kernel runs it), caches it, and stores it;
  // the next recording finds it in the cache.
  auto q = run_shell(env + uprof_binary() + " record -o " + dir.file("q.data") + " -e add -- " +
                     fixture("x86_64", "workload") + " calls 100");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  auto cached_table = [&] {
    std::ifstream in(probe_cost_cache_path(current_kernel().release, dir.path().c_str(), nullptr, true));
    std::stringstream ss;
    ss << in.rdbuf();
    auto t = parse_probe_costs(ss.str());
    EXPECT_TRUE(t.ok()) << t.error().message << "\n" << ss.str();
    return t.ok() ? *t : ProbeCostTable{};
  };
  EngineKind auto_engine = EngineKind::Bpf;
  {
    auto f = DataFileReader::open(dir.file("q.data"));
    ASSERT_TRUE(f.ok()) << f.error().message;
    auto used = engine_kind_from_name(f->meta().engine);
    ASSERT_TRUE(used.has_value()) << f->meta().engine;
    auto_engine = *used;
    EXPECT_NE(q.err.find("measuring what a probe costs on this kernel (single-stepped, " + f->meta().engine +
                         " engine; once per boot"),
              std::string::npos)
        << q.err;
    EXPECT_NE(q.err.find("uprof: first instructions: add single-stepped ("), std::string::npos) << q.err;
    EXPECT_NE(q.err.find(" a call\n"), std::string::npos) << q.err;
    ASSERT_EQ(f->meta().probe_costs_ns.size(), f->probes().size());
    for (uint64_t c : f->meta().probe_costs_ns) {
      EXPECT_GT(c, 0u);
      EXPECT_LT(c, 1'000'000u);
    }
    ProbeCostTable quick = cached_table();
    ASSERT_NE(quick.find(auto_engine, InsnClass::SingleStepped), nullptr) << to_text(quick);
    EXPECT_EQ(quick.find(auto_engine, InsnClass::SingleStepped)->inside_ns, f->meta().probe_costs_ns[0]);
    EXPECT_EQ(quick.find(auto_engine, InsnClass::Emulated), nullptr) << to_text(quick);
    EXPECT_EQ(quick.find(auto_engine, InsnClass::Optimized), nullptr) << to_text(quick);
  }
  auto q2 = run_shell(env + uprof_binary() + " record -o " + dir.file("q.data") + " -e add -- " +
                      fixture("x86_64", "workload") + " calls 100");
  ASSERT_EQ(q2.exit_code, 0) << q2.err;
  EXPECT_EQ(q2.err.find("measuring"), std::string::npos) << q2.err;
  EXPECT_NE(q2.err.find(" a call\n"), std::string::npos) << q2.err;
  // The other engine's figure is not the one cached: a recording with it measures its own.
  if (auto_engine == EngineKind::Bpf) {
    auto qp = run_shell(env + uprof_binary() + " record --engine perf -o " + dir.file("q.data") + " -e add -- " +
                        fixture("x86_64", "workload") + " calls 100");
    ASSERT_EQ(qp.exit_code, 0) << qp.err;
    EXPECT_NE(qp.err.find("measuring what a probe costs on this kernel (single-stepped, perf engine; once per boot"),
              std::string::npos)
        << qp.err;
    ProbeCostTable both = cached_table();
    EXPECT_NE(both.find(EngineKind::Perf, InsnClass::SingleStepped), nullptr) << to_text(both);
    EXPECT_NE(both.find(EngineKind::Bpf, InsnClass::SingleStepped), nullptr) << to_text(both);  // kept
    auto f = DataFileReader::open(dir.file("q.data"));
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_EQ(f->meta().engine, "perf");
    ASSERT_FALSE(f->meta().probe_costs_ns.empty());
    EXPECT_EQ(f->meta().probe_costs_ns[0], both.find(EngineKind::Perf, InsnClass::SingleStepped)->inside_ns);
  }

  // bench: every class with each engine the kernel runs, the engines side by side.
  auto b = run_shell(env + uprof_binary() + " bench --quick");
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_NE(b.out.find("single-stepped ("), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("emulated (push %rbp)"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("optimized (nop5)"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("  ENGINE  "), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("  perf  "), std::string::npos) << b.out;
  // The kernel-behaviour table checked against the figures (as measured, or a warning).
  EXPECT_NE(b.out.find("\nkernel table: "), std::string::npos) << b.out;
  std::vector<EngineKind> measured{EngineKind::Perf};
  if (auto_engine == EngineKind::Bpf) {
    measured.push_back(EngineKind::Bpf);
    EXPECT_NE(b.out.find("  bpf  "), std::string::npos) << b.out;
  } else {
    EXPECT_NE(b.err.find("uprof bench: not measuring the bpf engine: "), std::string::npos) << b.err;
  }

  ProbeCostTable bench_table = cached_table();
  const ProbeCostTable* table = &bench_table;
  EXPECT_EQ(table->boot_id, current_kernel().boot_id);
  for (EngineKind e : measured) {
    for (InsnClass c : {InsnClass::SingleStepped, InsnClass::Emulated, InsnClass::Optimized}) {
      const ClassCost* cc = table->find(e, c);
      ASSERT_NE(cc, nullptr) << to_string(e) << " " << to_string(c);
      for (double v : {cc->entry_ns, cc->return_ns, cc->call_ns, static_cast<double>(cc->inside_ns)}) {
        EXPECT_GT(v, 0) << to_string(e) << " " << to_string(c) << "\n" << b.out;
        EXPECT_LT(v, 1e6) << to_string(e) << " " << to_string(c) << "\n" << b.out;
      }
    }
  }
  auto show = run_shell(env + uprof_binary() + " bench --show");
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("emulated (push %rbp)"), std::string::npos) << show.out;
  auto show_perf = run_shell(env + uprof_binary() + " bench --show --engine perf");
  EXPECT_EQ(show_perf.exit_code, 0) << show_perf.err;
  EXPECT_NE(show_perf.out.find("  perf  "), std::string::npos) << show_perf.out;
  EXPECT_EQ(show_perf.out.find("  bpf  "), std::string::npos) << show_perf.out;
  auto bad = run_shell(env + uprof_binary() + " bench --engine auto");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--engine is bpf or perf"), std::string::npos) << bad.err;

  // Now record stores, per probe, the figure of its instruction's class with its engine:
  // the workload's add starts with lea (single-stepped), its main with push %r15
  // (emulated)...
  auto r1 = run_shell(env + uprof_binary() + " record -o " + dir.file("b.data") + " -e add -e main -- " +
                      fixture("x86_64", "workload") + " calls 100");
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  // Each probed function's cost per call, by its own instruction's class.
  EXPECT_NE(r1.err.find(" a call, main emulated (push %r15) +"), std::string::npos) << r1.err;
  EXPECT_EQ(r1.err.find("measuring"), std::string::npos) << r1.err;  // bench measured every class
  auto f = DataFileReader::open(dir.file("b.data"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ(f->meta().engine, to_string(auto_engine));
  const uint64_t step = table->find(auto_engine, InsnClass::SingleStepped)->inside_ns;
  const uint64_t emulated = table->find(auto_engine, InsnClass::Emulated)->inside_ns;
  ASSERT_EQ(f->meta().probe_costs_ns.size(), f->probes().size());
  ASSERT_EQ(f->probes().size(), 4u);
  for (const auto& p : f->probes()) {
    ASSERT_TRUE(p.function == "add" || p.function == "main") << p.function;
    EXPECT_EQ(f->meta().probe_costs_ns[p.index], p.function == "add" ? step : emulated) << p.function;
  }
  EXPECT_EQ(f->meta().probe_cost_ns, std::min(step, emulated));  // for readers of the single figure
  const uint64_t cost = step;  // add's, checked below

  // ...and report --compensate takes it off, in every format.
  auto text = run_shell(uprof_binary() + " report --compensate " + dir.file("b.data"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("latency:  compensated: "), std::string::npos) << text.out;
  auto json = run_shell(uprof_binary() + " report --format json --compensate " + dir.file("b.data"));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"compensated_ns\":" + std::to_string(cost)), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"probe_cost_ns\":" + std::to_string(emulated) + ",\"compensated_ns\":" +
                          std::to_string(emulated)),
            std::string::npos)
      << json.out;
  auto csv = run_shell(uprof_binary() + " report --format csv --compensate " + dir.file("b.data"));
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find(",unmatched,cut_by_loss,compensated_ns\n"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("," + std::to_string(cost) + "\n"), std::string::npos) << csv.out;

  // Each probe's whole cost per hit is stored too: main holds add's 200 hits, which the
  // raw report flags and --compensate takes off main's duration along with its own figure.
  const double step_call = table->find(auto_engine, InsnClass::SingleStepped)->call_ns;
  ASSERT_EQ(f->meta().probe_hit_costs_ns.size(), f->probes().size());
  for (const auto& p : f->probes()) {
    if (p.function == "add") {
      EXPECT_EQ(f->meta().probe_hit_costs_ns[p.index], static_cast<uint64_t>(std::llround(step_call / 2)));
    }
  }
  auto raw = build_report(dir.file("b.data"), AggregateOptions{});
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  AggregateOptions co;
  co.compensate = true;
  auto comp = build_report(dir.file("b.data"), co);
  ASSERT_TRUE(comp.ok()) << comp.error().message;
  EXPECT_TRUE(comp->options.compensate_nested);
  uint64_t add_calls = 0;
  for (const auto& g : raw->groups)
    if (raw->functions.functions[g.function].name == "add") add_calls = g.calls;
  EXPECT_EQ(add_calls, 100u);
  for (std::size_t i = 0; i < raw->groups.size(); i++) {
    const GroupStats& g = raw->groups[i];
    const std::string& name = raw->functions.functions[g.function].name;
    ASSERT_EQ(comp->groups[i].function, g.function);
    uint64_t nested = name == "main" ? add_calls * 2 * f->meta().probe_hit_costs_ns[0] : 0;
    EXPECT_EQ(g.nested_probe_ns, nested) << name;
    uint64_t off = (name == "main" ? emulated : step) + nested;
    EXPECT_EQ(comp->groups[i].latency.max(), g.latency.max() > off ? g.latency.max() - off : 0) << name;
  }
  // The note is printed when the nested probes' cost is over half of main's time; whether
  // it is depends on the load (main's time grows with it, the calibrated figure need not),
  // so the test checks the note against that rule rather than expecting it.
  std::string raw_text = render_text_report(*raw, TextReportOptions{});
  for (const GroupStats& g : raw->groups) {
    if (raw->functions.functions[g.function].name != "main") continue;
    const bool dominated = g.nested_probe_ns * 2 > g.latency.total();
    EXPECT_EQ(raw_text.find("the probed callees' probes dominate") != std::string::npos, dominated)
        << g.nested_probe_ns << " of " << g.latency.total() << "\n" << raw_text;
  }
  EXPECT_NE(json.out.find("\"compensated_nested\":true"), std::string::npos) << json.out;
}

}  // namespace
}  // namespace uprof
