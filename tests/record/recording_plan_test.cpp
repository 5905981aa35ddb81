// plan_recording on the fixtures: everything `record` decides before it opens an
// event, without root and without running anything.
#include "uprof/record/recording_plan.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>

#include "support/test_support.h"
#include "uprof/util/hex.h"

namespace uprof {
namespace {

using test::fixture;

RecordRequest request(const std::vector<std::string>& specs, const std::string& program) {
  RecordRequest r;
  for (const auto& text : specs) {
    auto s = parse_probe_spec(text);
    EXPECT_TRUE(s) << s.error().message;
    if (s) r.specs.push_back(*s);
  }
  if (!program.empty()) r.command = {program, "1"};
  return r;
}

constexpr uint16_t kDi = 5, kSi = 4, kAx = 0;

TEST(RecordingPlan, AFunctionGetsAnEntryAndAReturnProbeWithItsTypedValues) {
  const std::string exe = fixture("x86_64", "funcs_O2_pie");
  auto plan = plan_recording(request({"add"}, exe));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->target, exe);
  ASSERT_EQ(plan->probes.size(), 2u);
  const ProbeInfo& entry = plan->probes[0];
  const ProbeInfo& ret = plan->probes[1];
  EXPECT_EQ(entry.function, "add");
  EXPECT_EQ(entry.kind, ProbeKind::Entry);
  EXPECT_EQ(ret.kind, ProbeKind::Return);
  EXPECT_EQ(entry.file_offset, ret.file_offset);
  ASSERT_EQ(entry.values.size(), 2u);
  EXPECT_EQ(entry.values[0].name, "a");
  EXPECT_EQ(entry.values[0].type, "int");
  EXPECT_EQ(entry.values[1].name, "b");
  ASSERT_EQ(ret.values.size(), 1u);
  EXPECT_EQ(ret.values[0].name, "$retval");

  // The capture plan: one entry per probe, reading only what the values need.
  ASSERT_EQ(plan->capture.probes.size(), 2u);
  EXPECT_EQ(plan->capture.arch, Arch::X86_64);
  const ProbeCapture& ce = plan->capture.probes[0];
  EXPECT_EQ(ce.probe, 0u);
  EXPECT_EQ(ce.path, entry.path);
  EXPECT_EQ(ce.file_offset, entry.file_offset);
  EXPECT_FALSE(ce.is_return);
  EXPECT_EQ(ce.reads, (ProbeReads{.regs_mask = (1u << kDi) | (1u << kSi), .stack_bytes = 0}));
  EXPECT_TRUE(plan->capture.probes[1].is_return);
  EXPECT_EQ(plan->capture.probes[1].reads.regs_mask, 1u << kAx);
  EXPECT_TRUE(plan->notes.empty());
}

TEST(RecordingPlan, RawValuesAreBoundToTheFilesArchitecture) {
  auto plan = plan_recording(request({"add n=%si:u16 $arg1 $stack2"}, fixture("x86_64", "funcs_O2_pie")));
  ASSERT_TRUE(plan) << plan.error().message;
  const auto& v = plan->probes[0].values;
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].name, "n");
  EXPECT_EQ(v[0].reg, kSi);
  EXPECT_EQ(v[0].size, 2);
  EXPECT_FALSE(v[0].is_signed);
  EXPECT_EQ(v[1].reg, kDi);
  EXPECT_EQ(v[2].source, ValueSource::Stack);
  EXPECT_EQ(v[2].stack_offset, 16);
  // $stack2 makes the entry probe copy 24 bytes of stack and the stack pointer.
  EXPECT_EQ(plan->capture.probes[0].reads.stack_bytes, 24u);
  EXPECT_TRUE(plan->capture.probes[0].reads.regs_mask & (1u << 7));
}

TEST(RecordingPlan, TwoSpecsOnOneFunctionShareItsProbes) {
  auto plan = plan_recording(request({"add %di", "add%return %dx"}, fixture("x86_64", "funcs_O2_pie")));
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->probes.size(), 2u);
  ASSERT_EQ(plan->probes[1].values.size(), 1u);
  EXPECT_EQ(plan->probes[1].values[0].name, "%dx");
  EXPECT_EQ(plan->capture.probes[1].values.size(), 1u);
}

TEST(RecordingPlan, NoArgsCapturesCallsOnly) {
  auto req = request({"add"}, fixture("x86_64", "funcs_O2_pie"));
  req.capture_args = false;
  auto plan = plan_recording(std::move(req));
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->probes.size(), 2u);
  EXPECT_TRUE(plan->probes[0].values.empty());
  EXPECT_EQ(plan->capture.probes[0].reads, ProbeReads{});
}

TEST(RecordingPlan, NotesComeBackAsValues) {
  // funcs_nolink is funcs_O2_pie stripped, with no debug link: add's offset there
  // has no DWARF, so default capture records calls only, and a note says so.
  auto with_dwarf = plan_recording(request({"add"}, fixture("x86_64", "funcs_O2_pie")));
  ASSERT_TRUE(with_dwarf) << with_dwarf.error().message;
  const std::string nolink = fixture("x86_64", "funcs_nolink");
  auto plan = plan_recording(request({nolink + ":" + hex(with_dwarf->probes[0].file_offset)}, nolink));
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->notes.size(), 1u);
  EXPECT_NE(plan->notes[0].find(": no DWARF for it in " + nolink + ": arguments not captured"), std::string::npos)
      << plan->notes[0];
  EXPECT_TRUE(plan->probes[0].values.empty());
}

TEST(RecordingPlan, ErrorsNameWhatIsWrong) {
  const std::string exe = fixture("x86_64", "funcs_O2_pie");
  EXPECT_EQ(plan_recording(RecordRequest{}).error().message, "record: no probe given (-e SPEC)");
  EXPECT_EQ(plan_recording(request({"add"}, "")).error().message,
            "record: no command to run (uprof record -e SPEC -- CMD ARGS...) and no -p PID");
  auto missing = plan_recording(request({"no_such_fn"}, exe));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("no_such_fn"), std::string::npos) << missing.error().message;
  auto arm = plan_recording(request({"add"}, fixture("arm64", "funcs_O2_pie")));
  ASSERT_FALSE(arm);
  EXPECT_NE(arm.error().message.find("is an arm64 file; this machine runs x86_64"), std::string::npos)
      << arm.error().message;
  auto wrong_reg = plan_recording(request({"add %x0"}, exe));
  ASSERT_FALSE(wrong_reg);
  EXPECT_EQ(wrong_reg.error().message, "spec: value '%x0': no register 'x0' on x86_64");
  auto req = request({"add"}, "");
  req.attach_pid = 0x3ffffff0;  // above any pid_max
  EXPECT_EQ(plan_recording(std::move(req)).error().message, "record: -p 1073741808: no such process");
}

// A parameter followed through DWARF: the value is read where its type says, and a
// path that does not fit the type is refused, naming what the type has.
TEST(RecordingPlan, AccessPathsAreTypedByDwarfAndBadOnesNameTheType) {
  const std::string exe = test::fixture("x86_64", "strings_O2");
  auto plan = plan_recording(request({"visit it->name it->label it->weight it->id"}, exe));
  ASSERT_TRUE(plan) << plan.error().message;
  const auto& v = plan->probes[0].values;
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].name, "it->name");
  EXPECT_TRUE(v[0].is_string());  // char name[16] at +4: the string is right there
  EXPECT_TRUE(v[0].hops.empty());
  EXPECT_EQ(v[0].deref_offset, 4);
  EXPECT_TRUE(v[1].is_string());  // const char *label at +24: followed, then read
  EXPECT_EQ(v[1].hops, (std::vector<int32_t>{24}));
  EXPECT_EQ(v[1].deref_offset, 0);
  EXPECT_EQ(v[2].type, "long");
  EXPECT_EQ(v[2].deref_offset, 32);
  EXPECT_EQ(v[2].size, 8);
  EXPECT_EQ(v[3].type, "int");
  EXPECT_EQ(v[3].size, 4);
  EXPECT_TRUE(v[3].is_signed);

  auto err_of = [&](const char* spec) {
    auto p = plan_recording(request({spec}, exe));
    return p ? std::string("(planned)") : p.error().message;
  };
  EXPECT_EQ(err_of("visit it->nme"), "spec: 'visit it->nme': params: 'it->nme': struct item has no member 'nme' (it "
                                     "has id, name, label, weight)");
  EXPECT_EQ(err_of("lookup n->x"), "spec: 'lookup n->x': params: 'n->x': int is not a pointer: it cannot be followed");
  EXPECT_EQ(err_of("visit *it"),
            "spec: 'visit *it': params: '*it': a struct: name one of its members (id, name, label, weight)");
  EXPECT_EQ(err_of("visit q->id"), "spec: 'visit q->id': visit has no parameter 'q' (it has it)");
}

}  // namespace
}  // namespace uprof

namespace uprof {
namespace {

// A char pointer is captured as its string; the engines read it themselves, so the
// perf engine's sample need not carry its base register.
TEST(RecordingPlan, ACharPointerIsAStringTheEnginesRead) {
  auto plan = plan_recording(request({"measure"}, test::fixture("x86_64", "strings_O2")));
  ASSERT_TRUE(plan) << plan.error().message;
  const ProbeInfo& measure = plan->probes[0];
  EXPECT_EQ(measure.function, "measure");
  ASSERT_EQ(measure.values.size(), 1u);
  EXPECT_TRUE(measure.values[0].is_string());
  EXPECT_EQ(measure.values[0].string_max, 64);
  EXPECT_EQ(measure.values[0].reg, kDi);
  EXPECT_EQ(plan->capture.probes[0].reads.regs_mask, 0u);
}

}  // namespace
}  // namespace uprof

namespace uprof {
namespace {

// The kinds of probe each function of a plan got: "entry return", "entry exit", "entry".
std::map<std::string, std::string> kinds(const RecordingPlan& plan) {
  std::map<std::string, std::string> out;
  for (const auto& p : plan.probes) {
    std::string& s = out[p.function];
    const char* k = p.kind == ProbeKind::Entry ? "entry" : p.kind == ProbeKind::Return ? "return" : "exit";
    if (s.find(k) == std::string::npos) s += std::string(s.empty() ? "" : " ") + k;
  }
  return out;
}

// A glob over a whole C program: the entry point, a function that never returns and the
// rest, which keep their return probes.
TEST(RecordingPlanReturns, AGlobLeavesTheEntryPointWithoutAReturnProbe) {
  auto plan = plan_recording(request({fixture("x86_64", "alone_argv") + ":*"}, fixture("x86_64", "alone_argv")));
  ASSERT_TRUE(plan) << plan.error().message;
  auto k = kinds(*plan);
  EXPECT_EQ(k["_start"], "entry");
  EXPECT_EQ(k["main"], "entry return");
  EXPECT_EQ(k["show"], "entry return");
}

// qsort in a C++ process: it calls out (a tail call to qsort_r), so it is measured at its
// exits or, when those cannot be probed, counted only; never a return probe.
TEST(RecordingPlanReturns, CCodeThatCallsOutInACxxProcessGetsNoReturnProbe) {
  auto plan = plan_recording(request({"libc:qsort", "libc:bsearch", "libc:strlen"}, fixture("x86_64", "qsort_throw")));
  ASSERT_TRUE(plan) << plan.error().message;
  auto k = kinds(*plan);
  EXPECT_EQ(k["qsort"].find("return"), std::string::npos) << k["qsort"];
  EXPECT_EQ(k["bsearch"], "entry exit");
  EXPECT_NE(k["strlen"].find("return"), std::string::npos) << k["strlen"];  // a leaf: nothing unwinds through it
  // The same functions in a C program keep their return probes.
  auto c = plan_recording(request({"libc:bsearch"}, fixture("x86_64", "alone_argv")));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(kinds(*c)["bsearch"], "entry return");
}

// -a: the processes are not known; the C++ runtime is assumed.
TEST(RecordingPlanReturns, SystemWideAssumesTheCxxRuntime) {
  RecordRequest r = request({"/lib/x86_64-linux-gnu/libc.so.6:bsearch"}, "");
  r.system_wide = true;
  auto plan = plan_recording(r);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(kinds(*plan)["bsearch"], "entry exit");
}

TEST(RecordingPlanReturns, AProgramThatSwitchesStacksGetsNoReturnProbes) {
  auto plan =
      plan_recording(request({fixture("x86_64", "alone_swapcontext") + ":*"}, fixture("x86_64", "alone_swapcontext")));
  ASSERT_TRUE(plan) << plan.error().message;
  auto k = kinds(*plan);
  EXPECT_EQ(k["foo"], "entry exit");
  EXPECT_EQ(k["bar"], "entry exit");
  EXPECT_EQ(k["coroutine_a"], "entry");  // it never returns
  // --unsafe-returns: return probes, except where none can ever be right.
  RecordRequest unsafe = request({fixture("x86_64", "alone_swapcontext") + ":*"}, fixture("x86_64", "alone_swapcontext"));
  unsafe.plan.unsafe_returns = true;
  auto u = plan_recording(unsafe);
  ASSERT_TRUE(u) << u.error().message;
  auto uk = kinds(*u);
  EXPECT_EQ(uk["foo"], "entry return");
  EXPECT_EQ(uk["_start"], "entry");
}

}  // namespace
}  // namespace uprof
