// Arguments and return values by name and type from DWARF, end to end: real
// uprobes on the args fixture at -O0 and -O2 (x86-64), and an arm64 recording
// built from the arm64 fixture's own DWARF with hand-made samples, reported
// on this x86-64 host. The fixture calls every function with known values
// (g_in = 5): f10(5, 2, ..., 9, -10), f_pair({5, -5}), f_big({5, ..., 9}), ...
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <regex>
#include <sstream>

#include "support/test_support.h"
#include "uprof/record/probe_table.h"
#include "uprof/drain/sample_values.h"
#include "uprof/resolve/resolver.h"
#include "uprof/resolve/typed_values.h"
#include "uprof/store/data_file.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

// `uprof script` lines without their time/comm/pid prefix and duration:
// "f1(a1=5) = 6".
std::vector<std::string> calls(const std::string& script_out) {
  std::vector<std::string> out;
  std::istringstream in(script_out);
  std::string line;
  while (std::getline(in, line)) {
    auto at = line.find("  ", line.find('/'));
    std::string call = at == std::string::npos ? line : line.substr(at + 2);
    if (auto d = call.rfind("  ["); d != std::string::npos) call.resize(d);
    out.push_back(call);
  }
  return out;
}

bool has(const std::vector<std::string>& lines, const std::string& want) {
  return std::find(lines.begin(), lines.end(), want) != lines.end();
}

// What args.c passes, as uprof script must print it at -O0 and at -O2.
const std::vector<std::string> kExpected = {
    "f1(a1=5) = 6",
    "f7(a1=5, a2=2, a3=3, a4=4, a5=5, a6=6, a7=7) = 32",
    "f10(a1=5, a2=2, a3=3, a4=4, a5=5, a6=6, a7=7, a8=8, a9=9, a10=-10) = 39",
    "add(a=5, b=2) = 7",
    "f_unsigned(u=5, v=4000000000) = 4000000015",
    "f_neg(n=-5, m=-5) = 0",
    "f_bool_char(b=true, c='A', sc=-3, uc=200) = 62",
    "f_enum(c=BLUE) = 1",
    "f_pair(p={x=5, y=-5}) = 5",
    "f_big(b={a=5, b=6, c=7, d=8, e=9}) = 35",
    "f_float(d=<unavailable>, i=5) = <unavailable>",
    "f_recurse(n=5) = 15",
    "f_ret_pair(x=5, y=2) = {x=5, y=2}",
    "f_ret_big(x=5) = {a=5, b=6, c=7, d=8, e=9}",
    "f_clobber(a=5, b=9) = 19",
};

// Each fixture build (-O0, -O2) on each capture engine.
class TypedArgs : public ::testing::TestWithParam<std::tuple<const char*, std::string>> {
 protected:
  std::vector<std::string> record_and_script(const std::vector<std::string>& specs, const std::string& bin,
                                             std::string* err = nullptr) {
    std::vector<std::string> a{uprof_binary(), "record", "--engine", test::engine_of(engine()), "--attach", test::attach_of(engine()), "-o", dir_.file("u.data")};
    for (const auto& s : specs) a.insert(a.end(), {"-e", s});
    a.push_back(bin);
    auto r = run(a);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (err) *err = r.err;
    auto s = run({uprof_binary(), "script", dir_.file("u.data")});
    EXPECT_EQ(s.exit_code, 0) << s.err;
    return calls(s.out);
  }
  static const char* opt() { return std::get<0>(GetParam()); }
  static const std::string& engine() { return std::get<1>(GetParam()); }
  test::TempDir dir_;
};

TEST_P(TypedArgs, EveryParameterAndTheReturnValueByDefault) {
  UPROF_REQUIRE_UPROBES();
  const std::string bin = fixture("x86_64", std::string("args_") + opt());
  std::string err;
  auto lines = record_and_script({"f*", "add", "scale*"}, bin, &err);
  for (const auto& want : kExpected) EXPECT_TRUE(has(lines, want)) << want << "\nin:\n" << ::testing::PrintToString(lines);
  // The constant k == 3 at -O2 (scale.constprop.0) is DWARF's constant, at -O0 a register.
  bool scaled = has(lines, "scale(x=5, k=3) = 20") || has(lines, "scale.constprop.0(x=5, k=3) = 20");
  EXPECT_TRUE(scaled) << ::testing::PrintToString(lines);
  if (std::string(opt()) == "O2") {
    EXPECT_NE(err.find("a compiler clone"), std::string::npos) << err;
  }
}

TEST_P(TypedArgs, ByNameOnlyAndNone) {
  UPROF_REQUIRE_UPROBES();
  const std::string bin = fixture("x86_64", std::string("args_") + opt());
  EXPECT_TRUE(has(record_and_script({"add(b)"}, bin), "add(b=2) = 7"));
  EXPECT_TRUE(has(record_and_script({"add b"}, bin), "add(b=2) = 7"));
  EXPECT_TRUE(has(record_and_script({"f_pair $params"}, bin), "f_pair(p={x=5, y=-5})"));
  EXPECT_TRUE(has(record_and_script({"add()"}, bin), "add() = 7"));
  std::vector<std::string> a{uprof_binary(), "record", "--engine", test::engine_of(engine()), "--attach", test::attach_of(engine()), "--no-args", "-o", dir_.file("n.data"), "-e", "add", bin};
  ASSERT_EQ(run(a).exit_code, 0);
  EXPECT_TRUE(has(calls(run({uprof_binary(), "script", dir_.file("n.data")}).out), "add()"));
  // Raw registers still mean exactly those registers.
  EXPECT_TRUE(has(record_and_script({"add %di:s32"}, bin), "add(%di=5)"));
}

TEST_P(TypedArgs, JsonLinesCarryTypedValues) {
  UPROF_REQUIRE_UPROBES();
  const std::string bin = fixture("x86_64", std::string("args_") + opt());
  ASSERT_EQ(run({uprof_binary(), "record", "--engine", test::engine_of(engine()), "--attach", test::attach_of(engine()), "-o", dir_.file("j.data"), "-e", "f_enum", "-e", "f_bool_char", bin}).exit_code, 0);
  auto j = run({uprof_binary(), "script", dir_.file("j.data"), "--format", "json"});
  EXPECT_NE(j.out.find(R"("values":{"c":"BLUE"})"), std::string::npos) << j.out;
  EXPECT_NE(j.out.find(R"("b":true,"c":"'A'","sc":"-3","uc":"200")"), std::string::npos) << j.out;
}

// C++: a method's `this`, a class with a copy constructor passed by invisible
// reference (its member read through the address), a reference parameter.
TEST_P(TypedArgs, CxxMethodThisAndByReference) {
  UPROF_REQUIRE_UPROBES();
  const std::string bin = fixture("x86_64", std::string("args_cpp_") + opt());
  auto lines = record_and_script({"shapes::*"}, bin);
  auto matches = [&](const std::string& re) {
    return std::any_of(lines.begin(), lines.end(), [&](auto& l) { return std::regex_match(l, std::regex(re)); });
  };
  EXPECT_TRUE(matches(R"(shapes::Acc::add\(this=0x[0-9a-f]+, v=5, times=3\) = 15)")) << ::testing::PrintToString(lines);
  EXPECT_TRUE(has(lines, "shapes::by_tracked(t={id=1005}, k=2) = 1007")) << ::testing::PrintToString(lines);
  EXPECT_TRUE(matches(R"(shapes::by_ref\(r=0x[0-9a-f]+, k=4\) = 20)")) << ::testing::PrintToString(lines);
}

std::string opt_engine_name(const ::testing::TestParamInfo<std::tuple<const char*, std::string>>& p) {
  return std::string(std::get<0>(p.param)) + "_" + std::get<1>(p.param);
}
INSTANTIATE_TEST_SUITE_P(OptEngine, TypedArgs, ::testing::Combine(::testing::Values("O0", "O2"), UPROF_ENGINES),
                         opt_engine_name);

TEST(TypedArgsErrors, UnknownParameterAndNoDwarf) {
  const std::string bin = fixture("x86_64", "args_O2");
  auto r = run({uprof_binary(), "record", "-e", "add(c)", bin});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("add has no parameter 'c' (it has a, b)"), std::string::npos) << r.err;
  // Symbols without DWARF: asking by name is an error; by default, a note.
  test::TempDir dir;
  const std::string nodebug = dir.file("args_nodebug");
  ASSERT_EQ(run({"/usr/bin/objcopy", "--strip-debug", bin, nodebug}).exit_code, 0);
  auto s = run({uprof_binary(), "record", "-o", dir.file("u.data"), "-e", "add(a)", nodebug});
  EXPECT_NE(s.exit_code, 0);
  EXPECT_NE(s.err.find("no DWARF describes add"), std::string::npos) << s.err;
  if (test::have_uprobe_pmu() && test::is_root()) {
    auto d = run({uprof_binary(), "record", "-o", dir.file("u.data"), "-e", "add", nodebug});
    EXPECT_EQ(d.exit_code, 0) << d.err;
    EXPECT_NE(d.err.find("add: no DWARF for it"), std::string::npos) << d.err;
  }
}

TEST(TypedArgsVars, Arm64LocationsFromItsDwarf) {
  auto r = run({uprof_binary(), "probe", "--vars", fixture("arm64", "args_O2"), "f10", "f_pair", "f_big", "f_ret_big"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* want : {R"(long a8 +%x7\n)", R"(long a9 +\[sp\]\n)", R"(int a10 +\[sp\+8\] \(4 bytes\)\n)",
                           R"(struct pair p +%x0:%x1\n)", R"(struct big b +\[%x0\] \(40 bytes\)\n)",
                           R"(returns struct big +<not in a sample: memory the caller chose>)"})
    EXPECT_TRUE(std::regex_search(r.out, std::regex(want))) << want << "\n" << r.out;
}

// An arm64 recording made from the arm64 fixture's DWARF and samples as the
// arm64 kernel writes them (x0..x30, sp, pc; the stack above sp), reported here.
TEST(TypedArgsArm64, HandBuiltSamplesReportOnThisHost) {
  const std::string bin = fixture("arm64", "args_O2");
  Resolver resolver;
  TypedValueResolver dwarf;
  std::vector<ResolvedProbe> resolved;
  std::vector<std::string> notes;
  for (const char* name : {"f10", "f_pair", "f_big", "f_bool_char"}) {
    auto spec = parse_probe_spec(name);
    ASSERT_TRUE(spec);
    auto probes = resolver.resolve(*spec, bin);
    ASSERT_TRUE(probes) << probes.error().message;
    auto img = resolver.image(probes->front().path);
    ASSERT_TRUE(img);
    ASSERT_TRUE(apply_typed_values(dwarf, **img, probes->front(), true, notes));
    resolved.push_back(probes->front());
  }
  auto plan = plan_probes(resolved, {});
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->probes.size(), 8u);
  // f10 needs x0-x7 and 16 bytes of stack; f_big's [x0] needs a stack window.
  EXPECT_EQ(plan->capture.probes[0].reads.regs_mask, 0xffu | (uint64_t{1} << 31));
  EXPECT_EQ(plan->capture.probes[0].reads.stack_bytes, 16u);
  EXPECT_GE(plan->capture.probes[4].reads.stack_bytes, 64u);

  const uint64_t sp = 0x7ffffff000;
  auto sample = [&](std::vector<std::pair<int, uint64_t>> regs, std::vector<uint64_t> stack_words) {
    Sample s;
    s.regs_abi = 2;
    s.regs_mask = (uint64_t{1} << 33) - 1;  // x0-x30, sp, pc
    s.nregs = 33;
    s.regs[31] = sp;
    for (auto [r, v] : regs) s.regs[static_cast<std::size_t>(r)] = v;
    static std::vector<std::byte> stack;
    stack.assign(stack_words.size() * 8, std::byte{0});
    // Not for no words: memcpy from an empty vector's null data() is UB (UBSan).
    if (!stack.empty()) std::memcpy(stack.data(), stack_words.data(), stack.size());
    s.stack = stack;
    s.stack_dyn_size = stack.size();
    return s;
  };
  test::TempDir dir;
  RecordingMeta meta{.arch = Arch::Arm64, .command = {bin}, .kernel = "6.18.0-arm64", .hostname = "guest",
                     .uprof_version = "test", .start_realtime_ns = 0, .start_monotonic_ns = 1000, .probe_cost_ns = 0};
  auto w = DataFileWriter::create(dir.file("arm64.data"), meta, plan->probes);
  ASSERT_TRUE(w) << w.error().message;
  uint64_t t = 2000;
  auto add = [&](uint32_t probe, const Sample& s) {
    Event e;
    e.probe = probe;
    e.pid = e.tid = 7;
    e.time = t += 1000;
    extract_values(s, plan->probes[probe].values, 31, e);
    ASSERT_TRUE(w->add(e));
  };
  const auto neg = [](int64_t v) { return static_cast<uint64_t>(v); };
  add(0, sample({{0, 5}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}}, {9, neg(-10)}));
  add(1, sample({{0, 39}}, {}));
  add(2, sample({{0, 5}, {1, neg(-5)}}, {}));
  add(3, sample({{0, 5}}, {}));
  // f_big: x0 points 64 bytes above sp, at the caller's copy.
  std::vector<uint64_t> frame(8, 0xdead);
  for (uint64_t v : {5, 6, 7, 8, 9}) frame.push_back(v);
  add(4, sample({{0, sp + 64}}, frame));
  add(5, sample({{0, 35}}, {}));
  add(6, sample({{0, 1}, {1, 'A'}, {2, 0xfd}, {3, 200}}, {}));
  add(7, sample({{0, 62}}, {}));
  ASSERT_TRUE(w->finish(Trailer{.end_monotonic_ns = t + 1000, .events = 8, .lost = 0, .exit_status = 0,
                                .counts = std::vector<ProbeCount>(8, ProbeCount{1, 1})}));

  auto s = run({uprof_binary(), "script", dir.file("arm64.data")});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto lines = calls(s.out);
  EXPECT_TRUE(has(lines, "f10(a1=5, a2=2, a3=3, a4=4, a5=5, a6=6, a7=7, a8=8, a9=9, a10=-10) = 39")) << s.out;
  EXPECT_TRUE(has(lines, "f_pair(p={x=5, y=-5}) = 5")) << s.out;
  EXPECT_TRUE(has(lines, "f_big(b={a=5, b=6, c=7, d=8, e=9}) = 35")) << s.out;
  // Plain char is unsigned on arm64; signed char -3 is 0xfd.
  EXPECT_TRUE(has(lines, "f_bool_char(b=true, c='A', sc=-3, uc=200) = 62")) << s.out;
  auto r = run({uprof_binary(), "report", dir.file("arm64.data")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("a10: min -10, max -10"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace uprof
