// Functions by the names people write: Rust paths (legacy and v0 symbols), Go's package
// paths and methods, globs on them. The symbols are as rustc and Go's linker write them.
#include "uprof/resolve/elf/function_table.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace uprof {
namespace {

ElfSymbol fn(const std::string& name, uint64_t addr) {
  ElfSymbol s;
  s.name = name;
  s.value = addr;
  s.size = 16;
  s.type = STT_FUNC;
  s.bind = STB_LOCAL;
  s.shndx = 14;
  s.in_exec_section = true;
  return s;
}

std::vector<std::string> shown(const std::vector<const Function*>& hits) {
  std::vector<std::string> out;
  for (const Function* f : hits) out.push_back(f->display_name());
  std::sort(out.begin(), out.end());
  return out;
}

using Names = std::vector<std::string>;

TEST(FunctionTable, RustFunctionsByTheirPath) {
  for (bool v0 : {false, true}) {
    SCOPED_TRACE(v0 ? "v0" : "legacy");
    const std::vector<ElfSymbol> symbols =
        v0 ? std::vector<ElfSymbol>{fn("_RNvCskK7mfDs1mzF_1m4work", 0x1000),
                                    fn("_RNvNtCskK7mfDs1mzF_1m5inner6helper", 0x1010),
                                    fn("_RNvCskK7mfDs1mzF_1m3mid", 0x1020), fn("_RNvCs1234_2mm4work", 0x1030)}
           : std::vector<ElfSymbol>{fn("_ZN1m4work17h8fc5375735d8f164E", 0x1000),
                                    fn("_ZN1m5inner6helper17h0123456789abcdefE", 0x1010),
                                    fn("_ZN1m3mid17hfedcba9876543210E", 0x1020),
                                    fn("_ZN2mm4work17h00112233aabbccddE", 0x1030)};
    const auto t = FunctionTable::build(symbols);
    EXPECT_EQ(shown(t.find_cxx("m::work")), Names{"m::work"});
    EXPECT_EQ(shown(t.find_cxx("m::inner::helper")), Names{"m::inner::helper"});
    EXPECT_EQ(shown(t.find_cxx("m::nothing")), Names{});
    EXPECT_EQ(shown(t.find_glob("m::*")), (Names{"m::inner::helper", "m::mid", "m::work"}));
    EXPECT_EQ(shown(t.find_glob("*::work")), (Names{"m::work", "mm::work"}));
    // The raw symbol still names it.
    EXPECT_EQ(shown(t.find_exact(symbols[0].name)), Names{"m::work"});
    // "did you mean" offers paths.
    EXPECT_EQ(t.suggest("m::wrok"), Names{"m::work"});
  }
}

// A generic function's instances (v0 names each by its type) answer to its path.
TEST(FunctionTable, ARustGenericFunctionByItsPath) {
  const auto t = FunctionTable::build({fn("_RINvCskK7mfDs1mzF_1m2idmEB2_", 0x1000),
                                       fn("_RINvCskK7mfDs1mzF_1m2idyEB2_", 0x1010),
                                       fn("_RNvCskK7mfDs1mzF_1m4idle", 0x1020)});
  EXPECT_EQ(shown(t.find_cxx("m::id")), (Names{"m::id::<u32>", "m::id::<u64>"}));
  EXPECT_EQ(shown(t.find_cxx("m::id::<u64>")), Names{"m::id::<u64>"});
  EXPECT_EQ(shown(t.find_glob("m::id*")), (Names{"m::id::<u32>", "m::id::<u64>", "m::idle"}));
}

// Go's linker writes names as Go prints them: a package path, a receiver in parentheses.
TEST(FunctionTable, GoNamesAndGlobsOnThem) {
  const auto t = FunctionTable::build({fn("main.(*T).Run", 0x1000), fn("main.(*T).Stop", 0x1010),
                                       fn("main.(*BigT).Run", 0x1020), fn("main.T.Value", 0x1030),
                                       fn("net/http.(*conn).serve", 0x1040),
                                       fn("net/http.HandlerFunc.ServeHTTP", 0x1050), fn("net/url.Parse", 0x1060),
                                       fn("main.main", 0x1070)});
  EXPECT_EQ(shown(t.find_exact("main.(*T).Run")), Names{"main.(*T).Run"});
  EXPECT_EQ(shown(t.find_glob("main.(*T).Run")), Names{"main.(*T).Run"});
  EXPECT_EQ(shown(t.find_glob("main.(*T).*")), (Names{"main.(*T).Run", "main.(*T).Stop"}));
  EXPECT_EQ(shown(t.find_glob("net/http.*")), (Names{"net/http.(*conn).serve", "net/http.HandlerFunc.ServeHTTP"}));
  EXPECT_EQ(shown(t.find_glob("*.Run")), (Names{"main.(*BigT).Run", "main.(*T).Run"}));
}

}  // namespace
}  // namespace uprof
