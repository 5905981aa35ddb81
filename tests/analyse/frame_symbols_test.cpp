// Frames named through the real fixtures' symbols and DWARF (analyse/frame_symbols.h).
#include "uprof/analyse/frame_symbols.h"

#include <gtest/gtest.h>

#include <set>

#include "analyse/why_slow_builders.h"
#include "support/test_support.h"
#include "uprof/resolve/elf/offset.h"
#include "uprof/resolve/image.h"

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

// Every frame at an address of the function whose symbol is `symbol` (a return address
// one past each of its bytes), named: the names of each, innermost first.
std::vector<std::vector<std::string>> frames_in(const std::string& bin, const std::string& symbol,
                                                FrameSymbolizer& names) {
  std::vector<std::vector<std::string>> out;
  auto img = Image::load(bin, DebugSearch{});
  EXPECT_TRUE(img) << img.error().message;
  if (!img) return out;
  const auto f = img.value()->functions.find_exact(symbol);
  EXPECT_EQ(f.size(), 1u) << symbol;
  if (f.size() != 1) return out;
  names.add_object(1, bin, img.value()->elf.build_id());
  for (uint64_t a = f[0]->addr; a < f[0]->addr + f[0]->size; ++a) {
    const auto off = vaddr_to_offset(img.value()->elf.loads(), a);
    if (off) out.push_back(names.name({1, *off + 1}).functions);
  }
  return out;
}

// Where sq is inlined, a frame names sq and the function it is inlined in. (The copies'
// DW_AT_entry_pc is no address of theirs with gcc 12: gcc schedules the copies' code after
// it, so the test looks at every address of squares, as eu-addr2line -i would.)
TEST(FrameSymbols, NamesTheFunctionsInlinedAtACallSite) {
  FrameSymbolizer names;
  const auto frames = frames_in(test::fixture("x86_64", "lines_O2"), "squares", names);
  ASSERT_FALSE(frames.empty());
  int inlined = 0;
  for (const auto& f : frames) {
    ASSERT_FALSE(f.empty());
    EXPECT_EQ(f.back(), "squares");
    if (f.size() > 1) {
      ++inlined;
      EXPECT_EQ(f, (std::vector<std::string>{"sq", "squares"}));
    }
  }
  EXPECT_GT(inlined, 0);
}

// C++: an inlined member function and the function it is inlined in, by their demangled
// linkage names, as the function table names functions.
TEST(FrameSymbols, InlinedCxxMethodsByTheirFullNames) {
  FrameSymbolizer names;
  const auto frames = frames_in(test::fixture("x86_64", "lines_cxx_O2"), "_Z3runi", names);
  ASSERT_FALSE(frames.empty());
  std::set<std::string> seen;
  for (const auto& f : frames) {
    ASSERT_FALSE(f.empty());
    EXPECT_EQ(f.back(), "run(int)");
    if (f.size() > 1) {
      EXPECT_EQ(f.size(), 2u);
      seen.insert(f.front());
    }
  }
  EXPECT_EQ(seen, (std::set<std::string>{"ns::Acc::add(long)", "ns::Acc::add(int, int)"}));
}

// Copies inlined into copies: at the call of operator new in vector<int>::_M_realloc_insert
// (clones.cpp, g++ -O2), __new_allocator::allocate is inlined in allocator_traits::allocate,
// inlined in _Vector_base::_M_allocate, inlined in _M_realloc_insert. Every level is a frame,
// and the last is the function the code is in: the caller of operator new is no inlined
// allocate with _M_realloc_insert's frame gone (as perf --call-graph dwarf and eu-addr2line -i
// show it).
TEST(FrameSymbols, CopiesInlinedIntoCopiesAreEachAFrame) {
  const std::string realloc_insert =
      "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::__normal_iterator<int*, "
      "std::vector<int, std::allocator<int> > >, int const&)";
  FrameSymbolizer names;
  const auto frames = frames_in(test::fixture("x86_64", "clones_O2"),
                                "_ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx17__normal_iteratorIPiS1_EEDpOT_",
                                names);
  ASSERT_FALSE(frames.empty());
  bool nested = false;
  for (const auto& f : frames) {
    ASSERT_FALSE(f.empty());
    EXPECT_EQ(f.back(), realloc_insert);
    if (f.size() >= 4 && f.front() == "std::__new_allocator<int>::allocate(unsigned long, void const*)") {
      nested = true;
      EXPECT_EQ(f[f.size() - 2], "std::_Vector_base<int, std::allocator<int> >::_M_allocate(unsigned long)");
    }
  }
  EXPECT_TRUE(nested);
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
