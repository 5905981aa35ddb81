// Frames named through the real fixtures' symbols and DWARF (analyse/frame_symbols.h).
#include "uprof/analyse/frame_symbols.h"

#include <gtest/gtest.h>

#include <set>

#include "analyse/why_slow_builders.h"
#include "support/test_support.h"
#include "uprof/resolve/resolver.h"
#include "uprof/spec/probe_spec.h"

namespace uprof {
namespace {

TEST(FrameSymbols, NamesTheCallersOfAnO2BinaryWithoutFramePointers) {
  const auto w = test::WhySlow::load();
  FrameSymbolizer names;
  names.add_object(1, w.path, w.build_id);
  EXPECT_EQ(names.name(w.in_spinner).functions, std::vector<std::string>{"spinner"});
  EXPECT_EQ(names.name(w.in_sleeper).functions, std::vector<std::string>{"sleeper"});
  EXPECT_EQ(names.name(w.main_to_spinner).caller(), "main");
  EXPECT_EQ(names.name(w.main_to_sleeper).caller(), "main");
  EXPECT_TRUE(names.name(w.in_spinner).named);
  EXPECT_TRUE(names.problems().empty());
}

// A return address is the instruction after the call: the call is what names the frame,
// even where the next instruction is another function's first (a call that never returns).
TEST(FrameSymbols, ALastCallNamesItsOwnFunction) {
  const auto w = test::WhySlow::load();
  auto img = Image::load(w.path, DebugSearch{});
  ASSERT_TRUE(img);
  const auto spinner = img.value()->functions.find_exact("spinner");
  ASSERT_EQ(spinner.size(), 1u);
  const auto end = vaddr_to_offset(img.value()->elf.loads(), spinner[0]->addr + spinner[0]->size);
  ASSERT_TRUE(end);
  FrameSymbolizer names;
  names.add_object(1, w.path, w.build_id);
  EXPECT_EQ(names.name({1, *end}).caller(), "spinner");
}

TEST(FrameSymbols, NamesTheFunctionsInlinedAtACallSite) {
  const std::string bin = test::fixture("x86_64", "lines_O2");
  Resolver r;
  auto spec = parse_probe_spec("sq");
  ASSERT_TRUE(spec) << spec.error().message;
  auto probes = r.resolve(*spec, bin);
  ASSERT_TRUE(probes) << probes.error().message;
  auto img = r.image(bin);
  ASSERT_TRUE(img);
  int inlined = 0;
  FrameSymbolizer names;
  names.add_object(1, bin, img.value()->elf.build_id());
  for (const ResolvedProbe& p : *probes) {
    if (!p.as<InlinedSite>()) continue;
    ++inlined;
    const Function* outer = img.value()->functions.containing(p.vaddr);
    ASSERT_NE(outer, nullptr);
    // A frame whose call is at the copy's first instruction: inside sq, inside its caller.
    const FrameName& n = names.name({1, p.file_offset + 1});
    ASSERT_GE(n.functions.size(), 2u) << p.file_offset;
    EXPECT_EQ(n.functions.front(), "sq");
    EXPECT_EQ(n.functions.back(), outer->source);
  }
  EXPECT_GT(inlined, 0);
}

// C++: an inlined member function and the function it is inlined in, by their demangled
// linkage names, as the function table names functions.
TEST(FrameSymbols, InlinedCxxMethodsByTheirFullNames) {
  const std::string bin = test::fixture("x86_64", "lines_cxx_O2");
  Resolver r;
  auto spec = parse_probe_spec("ns::Acc::add");
  ASSERT_TRUE(spec) << spec.error().message;
  auto probes = r.resolve(*spec, bin);
  ASSERT_TRUE(probes) << probes.error().message;
  auto img = r.image(bin);
  ASSERT_TRUE(img);
  FrameSymbolizer names;
  names.add_object(1, bin, img.value()->elf.build_id());
  std::set<std::string> seen;
  for (const ResolvedProbe& p : *probes) {
    const FrameName& n = names.name({1, p.file_offset + 1});
    ASSERT_EQ(n.functions.size(), 2u) << p.file_offset;
    seen.insert(n.functions.front());
    EXPECT_EQ(n.functions.back(), "run(int)");
  }
  EXPECT_EQ(seen, (std::set<std::string>{"ns::Acc::add(long)", "ns::Acc::add(int, int)"}));
}

// A stripped binary names its frames from its separate debug file (.gnu_debuglink), as
// the binary it was stripped from does.
TEST(FrameSymbols, AStrippedBinaryIsNamedFromItsDebugFile) {
  const std::string full = test::fixture("x86_64", "funcs_O2_pie"), stripped = test::fixture("x86_64", "funcs_stripped");
  auto img = Image::load(full, DebugSearch{});
  ASSERT_TRUE(img) << img.error().message;
  auto bare = Image::load(stripped, DebugSearch{});
  ASSERT_TRUE(bare) << bare.error().message;
  ASSERT_TRUE(bare.value()->stripped());
  FrameSymbolizer names;
  names.add_object(1, full, img.value()->elf.build_id());
  names.add_object(2, stripped, bare.value()->elf.build_id());
  for (const char* callee : {"add", "mul3", "loop_sum", "sql_close"}) {
    const uint64_t ret = test::return_address(**img, "main", callee);
    ASSERT_NE(ret, 0u) << callee;
    EXPECT_EQ(names.name({1, ret}).functions, std::vector<std::string>{"main"}) << callee;
    EXPECT_EQ(names.name({2, ret}).functions, std::vector<std::string>{"main"}) << callee;
  }
  EXPECT_TRUE(names.problems().empty());
}

TEST(FrameSymbols, CodeNoFileBacksIsUnknown) {
  FrameSymbolizer names;
  const FrameName& n = names.name({0, 0x7f0012345678});
  EXPECT_EQ(n.caller(), "[unknown] 0x7f0012345678");
  EXPECT_FALSE(n.named);
}

TEST(FrameSymbols, AFileRebuiltSinceTheRecordingIsNotReadForNames) {
  const auto w = test::WhySlow::load();
  FrameSymbolizer names;
  names.add_object(1, w.path, "00112233445566778899aabbccddeeff00112233");
  const FrameName& n = names.name(w.in_spinner);
  EXPECT_FALSE(n.named);
  char want[64];
  std::snprintf(want, sizeof want, "why_slow+0x%llx", static_cast<unsigned long long>(w.in_spinner.offset));
  EXPECT_EQ(n.caller(), want);
  ASSERT_EQ(names.problems().size(), 1u);
  EXPECT_NE(names.problems()[0].find("is not the recording's (00112233445566778899aabbccddeeff00112233)"),
            std::string::npos)
      << names.problems()[0];
  names.name(w.in_sleeper);
  EXPECT_EQ(names.problems().size(), 1u);  // once per file
}

TEST(FrameSymbols, AFileGoneSinceTheRecordingSaysSo) {
  FrameSymbolizer names;
  names.add_object(3, "/nonexistent/dir/app", "");
  EXPECT_EQ(names.name({3, 0x1139}).caller(), "app+0x1139");
  ASSERT_EQ(names.problems().size(), 1u);
  EXPECT_NE(names.problems()[0].find("/nonexistent/dir/app"), std::string::npos) << names.problems()[0];
}

}  // namespace
}  // namespace uprof
