// The kinds of a resolved probe, as a person reads them (label, describe) and as the
// record stage asks of them (a function entry, a return, a site, a USDT note). Pure.
#include "uprof/resolve/resolved_probe.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

ResolvedProbe in_function(std::string function, uint64_t offset, ProbePointKind kind) {
  ResolvedProbe p;
  p.spec = function;
  p.path = "/bin/x";
  p.function = std::move(function);
  p.symbol = "squares";
  p.function_addr = 0x1100;
  p.offset_in_function = offset;
  p.vaddr = 0x1100 + offset;
  p.file_offset = 0x1100 + offset;
  p.kind = std::move(kind);
  return p;
}

TEST(ResolvedProbe, EachKindLabelsAndDescribesItself) {
  const auto entry = in_function("add", 0, FunctionPoint{});
  EXPECT_EQ(entry.label(), "add");
  EXPECT_TRUE(entry.at_function_entry());
  EXPECT_FALSE(entry.is_return() || entry.is_site() || entry.is_usdt());

  const auto ret = in_function("add", 0, FunctionPoint{.is_return = true});
  EXPECT_EQ(ret.label(), "add%return");
  EXPECT_TRUE(ret.is_return());
  EXPECT_TRUE(ret.at_function_entry());

  const auto inside = in_function("loop_sum", 0x1c, FunctionPoint{});
  EXPECT_EQ(inside.label(), "loop_sum+0x1c");
  EXPECT_FALSE(inside.at_function_entry());

  const auto clone = in_function("scale", 0, FunctionPoint{.is_return = false, .clone = ".constprop.0"});
  EXPECT_EQ(clone.describe(), "scale [clone .constprop.0]");

  auto ifunc = in_function("strlen", 0, FunctionPoint{.is_return = false, .clone = {},
                                                      .ifunc_choice = "IFUNC, selected for this CPU"});
  ifunc.symbol = "__strlen_evex";
  EXPECT_EQ(ifunc.describe(), "strlen -> __strlen_evex (IFUNC, selected for this CPU)");

  const auto copy = in_function("sq", 0x15, InlinedSite{.into = "squares", .die = 0x2a});
  EXPECT_EQ(copy.label(), "sq");
  EXPECT_EQ(copy.describe(), "sq (inlined into squares+0x15)");
  EXPECT_TRUE(copy.is_site());
  EXPECT_FALSE(copy.at_function_entry());

  const auto line = in_function("lines.c:24", 0x10, LineSite{});
  EXPECT_EQ(line.describe(), "lines.c:24 (in squares+0x10)");
  // A line at a function's first byte is still a point, not the function's entry.
  EXPECT_FALSE(in_function("lines.c:20", 0, LineSite{}).at_function_entry());

  const auto usdt = in_function("python:gc__start", 0, UsdtPoint{.args = {}, .semaphore_offset = 0x68326c});
  EXPECT_TRUE(usdt.is_usdt());
  EXPECT_FALSE(usdt.at_function_entry());
  EXPECT_EQ(usdt.as<UsdtPoint>()->semaphore_offset, 0x68326cu);
}

TEST(ResolvedProbe, NotesCountClonesInlinedCopiesAndLineSites) {
  std::vector<ResolvedProbe> probes{
      in_function("twice", 0, FunctionPoint{}),
      in_function("twice", 0x15, InlinedSite{.into = "squares", .die = 1}),
      in_function("lines.c:23", 0, LineSite{}),
      in_function("lines.c:23", 0x15, LineSite{}),
      in_function("scale", 0, FunctionPoint{.is_return = false, .clone = ".constprop.0"}),
  };
  probes[4].function_addr = 0x2000;
  EXPECT_EQ(resolution_notes(probes),
            (std::vector<std::string>{
                "scale: probed at its clone .constprop.0 (gcc's copy; the file has no other)",
                "twice: 2 sites: 1 out-of-line, 1 inlined (an inlined copy counts calls: it has no return to time)",
                "lines.c:23: 2 sites (squares, squares+0x15)"}));
}

// A USDT argument uprof cannot read, left out of the probe's default values, is named
// once per probe name; with values named, the spec says what it records.
TEST(ResolutionNotes, AUsdtArgumentLeftOutOfTheDefaultsIsNamedOnce) {
  const std::vector<UsdtArg> args = read_usdt_args(Arch::X86_64, "-4@%edx 8@-24(%rsp,%rax,8) -8@%rcx");
  const auto site = in_function("uprof_ix:pick", 0, UsdtPoint{.args = args, .semaphore_offset = 0, .default_values = true});
  const std::vector<std::string> notes = resolution_notes({site, site});
  EXPECT_EQ(notes, (std::vector<std::string>{
                       "usdt: uprof_ix:pick: argument 2 (8@-24(%rsp,%rax,8)) is not recorded: an address with an index "
                       "register, which uprof does not read; its other arguments are"}));
  const auto named = in_function("uprof_ix:pick", 0, UsdtPoint{.args = args, .semaphore_offset = 0, .default_values = false});
  EXPECT_TRUE(resolution_notes({named}).empty());
}

}  // namespace
}  // namespace uprof
