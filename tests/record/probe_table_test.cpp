#include "uprof/record/probe_table.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

ResolvedProbe fn(std::string spec, std::vector<std::string> values, Arch a = Arch::X86_64) {
  ResolvedProbe r;
  r.spec = std::move(spec);
  r.path = "/bin/x";
  r.arch = a;
  r.function = "add";
  r.symbol = "add";
  r.file_offset = 0x1130;
  r.vaddr = 0x1130;
  for (const auto& v : values) {
    auto parsed = parse_value_request(v);
    EXPECT_TRUE(parsed) << parsed.error().message;
    if (parsed) r.values.push_back(*parsed);
  }
  return r;
}

TEST(ProbeTable, EntryAndReturnByDefaultWithValuesSplit) {
  auto plan = plan_probes({fn("add %di %si $retval", {"%di", "%si", "$retval"})}, {});
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->probes.size(), 2u);
  EXPECT_EQ(plan->probes[0].kind, ProbeKind::Entry);
  EXPECT_EQ(plan->probes[0].values.size(), 2u);
  EXPECT_EQ(plan->capture.probes[0].reads.regs_mask, (1u << 5) | (1u << 4));
  EXPECT_EQ(plan->probes[1].kind, ProbeKind::Return);
  EXPECT_EQ(plan->probes[1].index, 1u);
  ASSERT_EQ(plan->probes[1].values.size(), 1u);
  EXPECT_EQ(plan->capture.probes[1].reads.regs_mask, 1u);  // AX only
  EXPECT_EQ(plan->capture.probes[1].reads.stack_bytes, 0u);
}

// A Go function (measured at its exits): $argN are Go's ABIInternal registers, both probes
// carry the goroutine's g (r14, then the stack pointer last), and the entry reads its id.
TEST(ProbeTable, AGoFunctionsArgumentsAreItsAbisAndItsProbesCarryTheGoroutine) {
  auto r = fn("main.work $arg1 $arg2 $arg4 $retval", {"$arg1", "$arg2", "$arg4", "$retval"});
  r.function_addr = 0x1130;
  r.kind = FunctionPoint{};
  ReturnRisks risks;
  risks.by_function[{"/bin/x", 0x1130}] = ReturnRisk{
      .hazard = ReturnHazard::GoCode,
      .exits = {ExitSite{.vaddr = 0x1190, .offset = 0x60, .part = 0, .tail_call = false, .text = "retq"}},
      .exits_blocker = {},
      .goid_offset = 152};
  PlanOptions opts;
  opts.unsafe_returns = true;
  auto plan = plan_probes({r}, opts, risks);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->probes.size(), 2u);
  EXPECT_EQ(plan->probes[0].kind, ProbeKind::Entry);
  EXPECT_EQ(plan->probes[1].kind, ProbeKind::Exit);  // never a return probe, --unsafe-returns or not
  const ArchInfo& x86 = arch_info(Arch::X86_64);
  auto reg = [&](const ValueSpec& v) { return std::string(find_reg_by_perf_index(x86, v.reg)->name); };
  ASSERT_EQ(plan->probes[0].values.size(), 4u);
  EXPECT_EQ(reg(plan->probes[0].values[0]), "ax");
  EXPECT_EQ(reg(plan->probes[0].values[1]), "bx");
  EXPECT_EQ(reg(plan->probes[0].values[2]), "di");
  // The goroutine's id, read from its g: 152(%r14) in go 1.19's runtime.g.
  const ValueSpec& goid = plan->probes[0].values[3];
  EXPECT_EQ(goid.name, "$goid");
  EXPECT_EQ(reg(goid), "r14");
  EXPECT_TRUE(goid.deref);
  EXPECT_EQ(goid.deref_offset, 152);
  for (std::size_t i : {0, 1}) {
    const ProbeCapture& c = plan->capture.probes[i];
    EXPECT_TRUE(plan->probes[i].goroutine);
    EXPECT_TRUE(c.goroutine && c.frame);
    ASSERT_GE(c.values.size(), 2u);
    EXPECT_EQ(reg(c.values[c.values.size() - 2]), "r14");
    EXPECT_EQ(reg(c.values.back()), "sp");
  }
}

TEST(ProbeTable, NoValuesMeansNoRegisters) {
  auto plan = plan_probes({fn("add", {})}, {});
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->probes.size(), 2u);
  EXPECT_EQ(plan->capture.probes[0].reads.regs_mask, 0u);
  EXPECT_EQ(plan->capture.probes[1].reads.regs_mask, 0u);
}

TEST(ProbeTable, NarrowingAndDedup) {
  auto r = fn("add%return", {});
  r.kind = FunctionPoint{.is_return = true};
  auto only_ret = plan_probes({r}, {});
  ASSERT_TRUE(only_ret);
  ASSERT_EQ(only_ret->probes.size(), 1u);
  EXPECT_EQ(only_ret->probes[0].kind, ProbeKind::Return);

  auto entry_only = plan_probes({fn("add", {})}, {.entry_only = true, .return_only = false});
  ASSERT_EQ(entry_only->probes.size(), 1u);
  auto return_only = plan_probes({fn("add", {})}, {.entry_only = false, .return_only = true});
  ASSERT_EQ(return_only->probes.size(), 1u);
  EXPECT_EQ(return_only->probes[0].kind, ProbeKind::Return);

  auto twice = plan_probes({fn("add", {}), fn("a*", {})}, {});
  EXPECT_EQ(twice->probes.size(), 2u);

  auto mid = fn("add+0x4 %ax", {"%ax"});
  mid.offset_in_function = 4;
  auto m = plan_probes({mid}, {});
  ASSERT_TRUE(m);
  ASSERT_EQ(m->probes.size(), 1u);
  EXPECT_EQ(m->probes[0].kind, ProbeKind::Entry);
}

TEST(ProbeTable, Errors) {
  auto bad = plan_probes({fn("add %zz", {"%zz"})}, {});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "spec: value '%zz': no register 'zz' on x86_64");
  auto mid = fn("add+0x4 $retval", {"$retval"});
  mid.offset_in_function = 4;
  EXPECT_EQ(plan_probes({mid}, {}).error().message,
            "spec: 'add+0x4 $retval': $retval needs a return probe, and a probe inside a function has none");
  EXPECT_FALSE(plan_probes({fn("add", {})}, {.entry_only = true, .return_only = true}));
  // A raw offset outside every symbol: entry only, unless the spec asks for its return.
  auto raw = fn("bin:0x1139 $retval", {"$retval"});
  raw.function.clear();
  EXPECT_EQ(plan_probes({raw}, {}).error().message,
            "spec: 'bin:0x1139 $retval': $retval needs a return probe, and a raw offset outside every symbol has "
            "none (BIN:0xOFF%return asks for one)");
  auto raw_ret = fn("bin:0x1139%return $retval", {"$retval"});
  raw_ret.function.clear();
  raw_ret.kind = FunctionPoint{.is_return = true};
  auto rr = plan_probes({raw_ret}, {});
  ASSERT_TRUE(rr) << rr.error().message;
  ASSERT_EQ(rr->probes.size(), 1u);
  EXPECT_EQ(rr->probes[0].kind, ProbeKind::Return);
  EXPECT_EQ(rr->probes[0].values.size(), 1u);
}

TEST(ProbeTable, Arm64Registers) {
  auto plan = plan_probes({fn("add %x0 %x1 $retval", {"%x0", "%x1", "$retval"}, Arch::Arm64)}, {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->capture.probes[0].reads.regs_mask, 3u);
  EXPECT_EQ(plan->capture.probes[1].reads.regs_mask, 1u);
}

// On a return-only spec the registers named are read at the return: arm64's
// `add%return %lr $retval` (lr then holds the return trampoline's address).
TEST(ProbeTable, ReturnSpecReadsItsRegistersAtTheReturn) {
  ResolvedProbe r = fn("add%return %lr $retval", {"%lr", "$retval"}, Arch::Arm64);
  r.kind = FunctionPoint{.is_return = true};
  auto plan = plan_probes({r}, {});
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->probes.size(), 1u);
  EXPECT_EQ(plan->probes[0].kind, ProbeKind::Return);
  ASSERT_EQ(plan->probes[0].values.size(), 2u);
  EXPECT_EQ(plan->probes[0].values[0].name, "%lr");
  EXPECT_EQ(plan->capture.probes[0].reads.regs_mask, (uint64_t{1} << 30) | 1u);
}

// Two specs on one function: one probe per kind, carrying the values of both.
TEST(ProbeTable, SameProbeFromTwoSpecsMergesValues) {
  ResolvedProbe ret = fn("add%return %lr $retval", {"%lr", "$retval"}, Arch::Arm64);
  ret.kind = FunctionPoint{.is_return = true};
  auto plan = plan_probes({fn("add %x0", {"%x0"}, Arch::Arm64), ret}, {});
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->probes.size(), 2u);
  ASSERT_EQ(plan->probes[0].values.size(), 1u);
  EXPECT_EQ(plan->probes[0].values[0].name, "%x0");
  ASSERT_EQ(plan->probes[1].values.size(), 2u);
  EXPECT_EQ(plan->probes[1].values[0].name, "%lr");
  EXPECT_EQ(plan->capture.probes[1].reads.regs_mask, (uint64_t{1} << 30) | 1u);
}

TEST(ProbeTable, PairByNamesUsdtArguments) {
  EXPECT_EQ(*parse_pair_by("arg2"), std::vector<unsigned>{2});
  EXPECT_EQ(*parse_pair_by("$arg1,arg3,3"), (std::vector<unsigned>{1, 3}));
  EXPECT_EQ(parse_pair_by("arg0").error().message,
            "--pair-by 'arg0': 'arg0' is not an argument: give arg1 to arg12, comma-separated (e.g. arg1,arg2)");
  EXPECT_FALSE(parse_pair_by("arg1,"));
  EXPECT_FALSE(parse_pair_by("name"));
  // Python's function pair is keyed by file and function name unless told otherwise.
  EXPECT_EQ(usdt_pair_key_args("python:function__return", {}), (std::vector<unsigned>{1, 2}));
  EXPECT_EQ(usdt_pair_key_args("python:function__entry", {2}), std::vector<unsigned>{2});
  EXPECT_TRUE(usdt_pair_key_args("python:gc__start", {}).empty());
}

}  // namespace
}  // namespace uprof
