#include "uprof/resolve/elf/global_values.h"

#include <elf.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace uprof {
namespace {

ElfSymbol sym(std::string name, uint64_t value, uint64_t size, uint8_t type, uint16_t shndx = 5) {
  ElfSymbol s;
  s.name = std::move(name);
  s.value = value;
  s.size = size;
  s.type = type;
  s.shndx = shndx;
  s.in_exec_section = type == STT_FUNC;
  return s;
}

std::vector<ValueRequest> values(std::initializer_list<const char*> tokens) {
  std::vector<ValueRequest> out;
  for (const char* t : tokens) out.push_back(*parse_value_request(t));
  return out;
}

const std::vector<ElfSymbol> kSymbols{
    sym("visits", 0x4060, 4, STT_OBJECT), sym("table", 0x4100, 64, STT_OBJECT), sym("main", 0x1040, 90, STT_FUNC),
    sym("errno_tls", 0x10, 4, STT_TLS), sym("environ", 0, 8, STT_OBJECT, SHN_UNDEF)};

TEST(GlobalValues, SymbolsGiveTheirAddressAndScalarSize) {
  auto v = values({"@visits", "@table", "@table+8", "@0x5000", "%di"});
  ASSERT_TRUE(resolve_globals(v, kSymbols, "/bin/x"));
  EXPECT_EQ(std::get<GlobalRef>(v[0].target).address, 0x4060u);
  EXPECT_EQ(std::get<GlobalRef>(v[0].target).size, 4u);
  EXPECT_EQ(std::get<GlobalRef>(v[1].target).size, 0u);  // 64 bytes: read as 8 unless typed
  EXPECT_EQ(std::get<GlobalRef>(v[2].target).address, 0x4100u);
  EXPECT_EQ(std::get<GlobalRef>(v[2].target).offset, 8);
  EXPECT_EQ(std::get<GlobalRef>(v[3].target).address, 0x5000u);
}

TEST(GlobalValues, RefusalsSayWhatTheSymbolIs) {
  auto check = [](const char* token, const std::string& message) {
    auto v = values({token});
    auto r = resolve_globals(v, kSymbols, "/bin/x");
    ASSERT_FALSE(r) << token;
    EXPECT_EQ(r.error().message, message);
  };
  check("@vists", "spec: value '@vists': no global 'vists' in /bin/x (data objects: table, visits)");
  check("@main", "spec: value '@main': 'main' is code, not data");
  check("@errno_tls",
        "spec: value '@errno_tls': 'errno_tls' is thread-local: each thread has its own, which uprof cannot address yet");
  check("@environ",
        "spec: value '@environ': 'environ' is imported by /bin/x, not defined there: probe a function of the file "
        "that defines it");
}

// On a real file: the strings fixture's globals, against nm.
TEST(GlobalValues, FixtureGlobalsMatchNm) {
  const std::string bin = test::fixture("x86_64", "strings_O2");
  auto elf = ElfFile::open(bin);
  ASSERT_TRUE(elf) << elf.error().message;
  auto v = values({"@visits", "@greeting", "@long_text"});
  ASSERT_TRUE(resolve_globals(v, elf->symbols(), bin));
  for (const auto& value : v) {
    const auto& g = std::get<GlobalRef>(value.target);
    auto nm = test::run_shell("nm " + bin + " | awk '$3 == \"" + g.symbol + "\" {print $1}'");
    ASSERT_EQ(nm.exit_code, 0);
    EXPECT_EQ(g.address, std::stoull(nm.out, nullptr, 16)) << g.symbol;
  }
  EXPECT_EQ(std::get<GlobalRef>(v[0].target).size, 4u);  // int
  EXPECT_EQ(std::get<GlobalRef>(v[1].target).size, 8u);  // a pointer
  EXPECT_EQ(std::get<GlobalRef>(v[2].target).size, 0u);  // char[200]
}

}  // namespace
}  // namespace uprof
