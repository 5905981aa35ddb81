// `uprof bench` on the real kernel, then what it feeds: the figure `uprof record`
// stores in META and `uprof report --compensate` takes off. Only what is robust on a
// loaded VM is asserted: every figure positive and below a millisecond; no ordering
// between the classes.
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

#define REQUIRE_ROOT_UPROBES()                                                          \
  if (!std::filesystem::exists("/sys/kernel/tracing/uprobe_events") &&                  \
      !std::filesystem::exists("/sys/kernel/debug/tracing/uprobe_events"))              \
    GTEST_SKIP() << "no tracefs uprobe_events";                                          \
  if (geteuid() != 0) GTEST_SKIP() << "not root"

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

  // Without it, record measures the one class its probe needs (add starts with lea), caches
  // it, and stores it; the next recording finds it in the cache.
  auto q = run_shell(env + uprof_binary() + " record -o " + dir.file("q.data") + " -e add -- " +
                     fixture("x86_64", "workload") + " calls 100");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_NE(q.err.find("measuring what a probe costs on this kernel (single-stepped; once per boot"),
            std::string::npos)
      << q.err;
  EXPECT_NE(q.err.find("uprof: first instructions: add single-stepped ("), std::string::npos) << q.err;
  EXPECT_NE(q.err.find(" a call\n"), std::string::npos) << q.err;
  {
    auto f = DataFileReader::open(dir.file("q.data"));
    ASSERT_TRUE(f.ok()) << f.error().message;
    ASSERT_EQ(f->meta().probe_costs_ns.size(), f->probes().size());
    for (uint64_t c : f->meta().probe_costs_ns) {
      EXPECT_GT(c, 0u);
      EXPECT_LT(c, 1'000'000u);
    }
    std::ifstream in(probe_cost_cache_path(current_kernel().release, dir.path().c_str(), nullptr, true));
    std::stringstream ss;
    ss << in.rdbuf();
    auto quick = parse_probe_costs(ss.str());
    ASSERT_TRUE(quick.ok()) << quick.error().message << "\n" << ss.str();
    ASSERT_NE(quick->find(InsnClass::SingleStepped), nullptr) << ss.str();
    EXPECT_EQ(quick->find(InsnClass::SingleStepped)->inside_ns, f->meta().probe_costs_ns[0]);
    EXPECT_EQ(quick->find(InsnClass::Emulated), nullptr) << ss.str();
    EXPECT_EQ(quick->find(InsnClass::Optimized), nullptr) << ss.str();
  }
  auto q2 = run_shell(env + uprof_binary() + " record -o " + dir.file("q.data") + " -e add -- " +
                      fixture("x86_64", "workload") + " calls 100");
  ASSERT_EQ(q2.exit_code, 0) << q2.err;
  EXPECT_EQ(q2.err.find("measuring"), std::string::npos) << q2.err;
  EXPECT_NE(q2.err.find(" a call\n"), std::string::npos) << q2.err;

  auto b = run_shell(env + uprof_binary() + " bench --quick");
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_NE(b.out.find("single-stepped ("), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("emulated (push %rbp)"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("optimized (nop5)"), std::string::npos) << b.out;

  std::ifstream in(probe_cost_cache_path(current_kernel().release, dir.path().c_str(), nullptr, true));
  std::stringstream ss;
  ss << in.rdbuf();
  auto table = parse_probe_costs(ss.str());
  ASSERT_TRUE(table.ok()) << table.error().message << "\n" << ss.str();
  EXPECT_EQ(table->boot_id, current_kernel().boot_id);
  for (InsnClass c : {InsnClass::SingleStepped, InsnClass::Emulated, InsnClass::Optimized}) {
    const ClassCost* cc = table->find(c);
    ASSERT_NE(cc, nullptr) << to_string(c);
    for (double v : {cc->entry_ns, cc->return_ns, cc->call_ns, static_cast<double>(cc->inside_ns)}) {
      EXPECT_GT(v, 0) << to_string(c) << "\n" << b.out;
      EXPECT_LT(v, 1e6) << to_string(c) << "\n" << b.out;
    }
  }
  auto show = run_shell(env + uprof_binary() + " bench --show");
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("emulated (push %rbp)"), std::string::npos) << show.out;

  // Now record stores, per probe, the figure of its instruction's class: the workload's
  // add starts with lea (single-stepped), its main with push %r15 (emulated)...
  auto r1 = run_shell(env + uprof_binary() + " record -o " + dir.file("b.data") + " -e add -e main -- " +
                      fixture("x86_64", "workload") + " calls 100");
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  // Each probed function's cost per call, by its own instruction's class.
  EXPECT_NE(r1.err.find(" a call, main emulated (push %r15) +"), std::string::npos) << r1.err;
  EXPECT_EQ(r1.err.find("measuring"), std::string::npos) << r1.err;  // bench measured every class
  auto f = DataFileReader::open(dir.file("b.data"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  const uint64_t step = table->find(InsnClass::SingleStepped)->inside_ns;
  const uint64_t emulated = table->find(InsnClass::Emulated)->inside_ns;
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
  EXPECT_NE(csv.out.find(",unmatched,compensated_ns\n"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("," + std::to_string(cost) + "\n"), std::string::npos) << csv.out;

  // Each probe's whole cost per hit is stored too: main holds add's 200 hits, which the
  // raw report flags and --compensate takes off main's duration along with its own figure.
  const double step_call = table->find(InsnClass::SingleStepped)->call_ns;
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
  std::string raw_text = render_text_report(*raw, TextReportOptions{});
  EXPECT_NE(raw_text.find("the probed callees' probes dominate"), std::string::npos) << raw_text;
  EXPECT_NE(json.out.find("\"compensated_nested\":true"), std::string::npos) << json.out;
}

}  // namespace
}  // namespace uprof
