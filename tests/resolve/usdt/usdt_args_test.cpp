// The USDT argument parser on every operand form gcc writes into .note.stapsdt, on
// both architectures, and on the forms it refuses. The real files' argument strings
// are parsed in usdt_notes_test.cpp.
#include "uprof/resolve/usdt/usdt_args.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

// Perf indices (arch.cpp): x86-64 ax 0, bx 1, dx 3, si 4, bp 6, sp 7, r8 16, r12 20,
// r15 23; arm64 xN N, sp 31.
constexpr uint8_t kAx = 0, kBx = 1, kCx = 2, kDx = 3, kSi = 4, kDi = 5, kBp = 6, kSp = 7, kR8 = 16, kR12 = 20,
                  kR15 = 23;

UsdtArg parse(Arch arch, std::string_view text) {
  auto a = parse_usdt_arg(arch, text);
  EXPECT_TRUE(a) << text << ": " << (a ? "" : a.error().message);
  return a ? *a : UsdtArg{};
}

uint8_t reg_of(const UsdtArg& a) {
  auto* r = std::get_if<UsdtRegister>(&a.location);
  EXPECT_TRUE(r) << a.text << " is not a register";
  return r ? r->reg : 0xff;
}

UsdtMemory mem_of(const UsdtArg& a) {
  auto* m = std::get_if<UsdtMemory>(&a.location);
  EXPECT_TRUE(m) << a.text << " is not memory";
  return m ? *m : UsdtMemory{.base = 0xff};
}

int64_t const_of(const UsdtArg& a) {
  auto* c = std::get_if<UsdtConstant>(&a.location);
  EXPECT_TRUE(c) << a.text << " is not a constant";
  return c ? c->value : -12345;
}

std::string error_of(Arch arch, std::string_view text) {
  auto a = parse_usdt_arg(arch, text);
  EXPECT_FALSE(a) << text << " parsed";
  return a ? "" : a.error().message;
}

TEST(UsdtArgs, SizeAndSignedness) {
  for (auto [text, size, sign] : {std::tuple{"1@%al", 1, false}, {"-1@%al", 1, true}, {"2@%ax", 2, false},
                                  {"-2@%ax", 2, true}, {"4@%eax", 4, false}, {"-4@%eax", 4, true},
                                  {"8@%rax", 8, false}, {"-8@%rax", 8, true}}) {
    auto a = parse(Arch::X86_64, text);
    EXPECT_EQ(a.size, size) << text;
    EXPECT_EQ(a.is_signed, sign) << text;
    EXPECT_EQ(a.text, text);
  }
}

TEST(UsdtArgs, X86RegistersOfEveryWidthNameTheir64BitRegister) {
  for (auto [text, reg] : {std::pair{"8@%rbp", kBp}, {"-4@%eax", kAx}, {"2@%ax", kAx}, {"1@%al", kAx},
                           {"4@%ebx", kBx}, {"1@%cl", kCx}, {"-4@%edx", kDx}, {"1@%sil", kSi}, {"4@%edi", kDi},
                           {"1@%dil", kDi}, {"-4@%ebp", kBp}, {"8@%rsp", kSp}, {"8@%r8", kR8}, {"4@%r8d", kR8},
                           {"2@%r8w", kR8}, {"1@%r8b", kR8}, {"-4@%r12d", kR12}, {"8@%r15", kR15}}) {
    EXPECT_EQ(reg_of(parse(Arch::X86_64, text)), reg) << text;
  }
}

TEST(UsdtArgs, X86Memory) {
  // python3.11's gc__start.
  auto m = mem_of(parse(Arch::X86_64, "-4@112(%rsp)"));
  EXPECT_EQ(m.base, kSp);
  EXPECT_EQ(m.offset, 112);
  EXPECT_FALSE(m.index);
  EXPECT_EQ(m.scale, 1);
  // libstdc++'s catch: 8@-80(%rbx).
  m = mem_of(parse(Arch::X86_64, "8@-80(%rbx)"));
  EXPECT_EQ(m.base, kBx);
  EXPECT_EQ(m.offset, -80);
  m = mem_of(parse(Arch::X86_64, "8@(%rax)"));
  EXPECT_EQ(m.base, kAx);
  EXPECT_EQ(m.offset, 0);
  m = mem_of(parse(Arch::X86_64, "-4@0x10(%rbp)"));
  EXPECT_EQ(m.base, kBp);
  EXPECT_EQ(m.offset, 16);
  // A 32-bit base register (an address-size prefix) still names the register.
  EXPECT_EQ(mem_of(parse(Arch::X86_64, "4@8(%esi)")).base, kSi);
}

TEST(UsdtArgs, X86Indexed) {
  auto m = mem_of(parse(Arch::X86_64, "8@(%rax,%rdx,8)"));
  EXPECT_EQ(m.base, kAx);
  EXPECT_EQ(m.index, std::optional<uint8_t>(kDx));
  EXPECT_EQ(m.scale, 8);
  EXPECT_EQ(m.offset, 0);
  m = mem_of(parse(Arch::X86_64, "8@16(%rax,%rdx,8)"));
  EXPECT_EQ(m.base, kAx);
  EXPECT_EQ(m.index, std::optional<uint8_t>(kDx));
  EXPECT_EQ(m.scale, 8);
  EXPECT_EQ(m.offset, 16);
  m = mem_of(parse(Arch::X86_64, "-2@-6(%r12,%r8)"));
  EXPECT_EQ(m.base, kR12);
  EXPECT_EQ(m.index, std::optional<uint8_t>(kR8));
  EXPECT_EQ(m.scale, 1);
  EXPECT_EQ(m.offset, -6);
  m = mem_of(parse(Arch::X86_64, "4@4(%rbx,%rcx,4)"));
  EXPECT_EQ(m.index, std::optional<uint8_t>(kCx));
  EXPECT_EQ(m.scale, 4);
}

TEST(UsdtArgs, X86Constants) {
  EXPECT_EQ(const_of(parse(Arch::X86_64, "4@$5")), 5);
  auto a = parse(Arch::X86_64, "-4@$-1");
  EXPECT_EQ(const_of(a), -1);
  EXPECT_TRUE(a.is_signed);
  EXPECT_EQ(const_of(parse(Arch::X86_64, "8@$0")), 0);
  EXPECT_EQ(const_of(parse(Arch::X86_64, "8@$0x7fffffffffffffff")), INT64_MAX);
  EXPECT_EQ(const_of(parse(Arch::X86_64, "-8@$-9223372036854775808")), INT64_MIN);
}

TEST(UsdtArgs, Arm64Registers) {
  EXPECT_EQ(reg_of(parse(Arch::Arm64, "8@x0")), 0);
  auto w = parse(Arch::Arm64, "-4@w1");
  EXPECT_EQ(reg_of(w), 1);  // w1 is the low half of x1
  EXPECT_EQ(w.size, 4);
  EXPECT_TRUE(w.is_signed);
  EXPECT_EQ(reg_of(parse(Arch::Arm64, "8@x19")), 19);
  EXPECT_EQ(reg_of(parse(Arch::Arm64, "4@w30")), 30);
  EXPECT_EQ(reg_of(parse(Arch::Arm64, "8@x30")), 30);
  EXPECT_EQ(reg_of(parse(Arch::Arm64, "8@sp")), 31);
}

TEST(UsdtArgs, Arm64Memory) {
  auto m = mem_of(parse(Arch::Arm64, "-4@[sp, 12]"));
  EXPECT_EQ(m.base, 31);
  EXPECT_EQ(m.offset, 12);
  EXPECT_FALSE(m.index);
  m = mem_of(parse(Arch::Arm64, "8@[x1]"));
  EXPECT_EQ(m.base, 1);
  EXPECT_EQ(m.offset, 0);
  m = mem_of(parse(Arch::Arm64, "8@[x1,-8]"));
  EXPECT_EQ(m.base, 1);
  EXPECT_EQ(m.offset, -8);
  m = mem_of(parse(Arch::Arm64, "2@[x29, #-6]"));
  EXPECT_EQ(m.base, 29);
  EXPECT_EQ(m.offset, -6);
}

TEST(UsdtArgs, Arm64Constants) {
  EXPECT_EQ(const_of(parse(Arch::Arm64, "4@5")), 5);
  EXPECT_EQ(const_of(parse(Arch::Arm64, "-4@-1")), -1);
  EXPECT_EQ(const_of(parse(Arch::Arm64, "8@#42")), 42);
}

TEST(UsdtArgs, TheSyntaxIsTheFilesArchitectures) {
  // x86-64 spelling in an arm64 file, and the other way round: neither parses.
  EXPECT_NE(error_of(Arch::Arm64, "8@%rbp").find("unknown"), std::string::npos);
  EXPECT_NE(error_of(Arch::X86_64, "8@x0").find("unknown"), std::string::npos);
  EXPECT_NE(error_of(Arch::X86_64, "-4@[sp, 12]").find("unknown"), std::string::npos);
}

TEST(UsdtArgs, ErrorsNameTheArgument) {
  EXPECT_EQ(error_of(Arch::X86_64, "8@%foo"), "usdt: argument '8@%foo': unknown register '%foo' (x86_64)");
  EXPECT_EQ(error_of(Arch::Arm64, "8@x31"), "usdt: argument '8@x31': unknown register 'x31' (arm64)");
  EXPECT_EQ(error_of(Arch::X86_64, "3@%eax"),
            "usdt: argument '3@%eax': size 3 is not 1, 2, 4 or 8 bytes (negative for signed)");
  EXPECT_EQ(error_of(Arch::X86_64, "%eax"), "usdt: argument '%eax': unknown form: expected SIZE@OPERAND");
  EXPECT_EQ(error_of(Arch::X86_64, "8@"), "usdt: argument '8@': no operand after '@'");
  EXPECT_EQ(error_of(Arch::X86_64, "1@%ah"), "usdt: argument '1@%ah': high-byte register '%ah' is not supported");
  EXPECT_EQ(error_of(Arch::X86_64, "8@(%rax,%rdx,3)"), "usdt: argument '8@(%rax,%rdx,3)': the scale must be 1, 2, 4 or 8");
  for (const char* bad : {"8@counter(%rip)", "8@16(%rax", "8@(,%rdx,8)", "4@$x", "8@%rax)", "8@%es", "-4@$5x",
                          "8@16"}) {
    auto e = error_of(Arch::X86_64, bad);
    EXPECT_EQ(e.rfind(std::string("usdt: argument '") + bad + "': ", 0), 0u) << e;
  }
  for (const char* bad : {"8@[x1", "8@[x1, x2]", "8@xzr", "8@pc", "8@[q0]", "4@5x", "8@x1 junk"}) {
    auto e = error_of(Arch::Arm64, bad);
    EXPECT_EQ(e.rfind(std::string("usdt: argument '") + bad + "': ", 0), 0u) << e;
  }
}

TEST(UsdtArgs, SplitsOnSpacesOutsideBrackets) {
  EXPECT_EQ(split_usdt_args(""), std::vector<std::string_view>{});
  EXPECT_EQ(split_usdt_args("  "), std::vector<std::string_view>{});
  EXPECT_EQ(split_usdt_args("8@%r14 8@%rax -4@%ebp"), (std::vector<std::string_view>{"8@%r14", "8@%rax", "-4@%ebp"}));
  EXPECT_EQ(split_usdt_args("-4@[sp, 12] 8@x0"), (std::vector<std::string_view>{"-4@[sp, 12]", "8@x0"}));
  auto all = parse_usdt_args(Arch::Arm64, "-4@[sp, 12] 8@x0  4@5");
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ(mem_of((*all)[0]).offset, 12);
  EXPECT_EQ(reg_of((*all)[1]), 0);
  EXPECT_EQ(const_of((*all)[2]), 5);
  // The first argument that fails fails the whole string, and is the one named.
  auto bad = parse_usdt_args(Arch::X86_64, "8@%rax 8@%nope 8@%rbx");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message.rfind("usdt: argument '8@%nope': ", 0), 0u);
}

// For recording, one argument that cannot be read costs only itself: the others parse,
// and each unreadable one says why (the note a recording prints names it).
TEST(UsdtArgs, ReadingKeepsEveryArgumentAndSaysWhichCannotBeRead) {
  auto args = read_usdt_args(Arch::X86_64, "-4@%edx 8@-24(%rsp,%rax,8) 8@%xmm1 8@4294967296(%rax) -8@%rcx");
  ASSERT_EQ(args.size(), 5u);
  EXPECT_EQ(usdt_arg_unreadable(args[0]), std::nullopt);
  EXPECT_EQ(usdt_arg_unreadable(args[1]), "an address with an index register, which uprof does not read");
  EXPECT_EQ(args[1].text, "8@-24(%rsp,%rax,8)");
  EXPECT_EQ(usdt_arg_unreadable(args[2]), "unknown register '%xmm1' (x86_64)");
  EXPECT_EQ(args[2].text, "8@%xmm1");
  EXPECT_EQ(usdt_arg_unreadable(args[3]), "an offset beyond 32 bits");
  EXPECT_EQ(usdt_arg_unreadable(args[4]), std::nullopt);
  EXPECT_EQ(reg_of(args[4]), kCx);
  EXPECT_TRUE(read_usdt_args(Arch::Arm64, "").empty());
}

}  // namespace
}  // namespace uprof
