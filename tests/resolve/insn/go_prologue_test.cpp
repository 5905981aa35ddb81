// Go's stack-growth check, told by its shape: a conditional branch among the first
// instructions to a tail that jumps back to the function's entry. Hand-assembled bytes,
// then main.work of the Go fixture as Go's own toolchain builds it for both
// architectures (the entry probe of a Go function goes where the check ends).
#include "uprof/resolve/insn/go_prologue.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "support/test_support.h"
#include "uprof/resolve/elf/elf_file.h"

namespace uprof {
namespace {

std::optional<GoStackCheck> check(Arch arch, const std::vector<uint8_t>& code) {
  auto d = InsnDecoder::open(arch);
  EXPECT_TRUE(d.ok());
  return go_stack_check(*d, code, 0x1000);
}

// A small frame compares %rsp itself.
TEST(GoPrologue, ASmallFramesCheckEndsAtItsBranch) {
  auto c = check(Arch::X86_64, {
                                   0x49, 0x3b, 0x66, 0x10,        // +0x0 cmp 0x10(%r14),%rsp
                                   0x76, 0x06,                    // +0x4 jbe +0xc
                                   0x55,                          // +0x6 push %rbp
                                   0x48, 0x89, 0xe5,              // +0x7 mov %rsp,%rbp
                                   0x5d,                          // +0xa pop %rbp
                                   0xc3,                          // +0xb ret
                                   0xe8, 0x00, 0x00, 0x00, 0x00,  // +0xc call morestack
                                   0xeb, 0xed,                    // +0x11 jmp +0x0: the function again
                               });
  ASSERT_TRUE(c);
  EXPECT_EQ(c->end, 0x6u);
  EXPECT_NE(c->text.find("0x10(%r14)"), std::string::npos) << c->text;
}

// A branch to a tail that goes anywhere but the entry is the body's, not the check.
TEST(GoPrologue, ABranchThatDoesNotRestartTheFunctionIsNoCheck) {
  EXPECT_FALSE(check(Arch::X86_64, {0x49, 0x3b, 0x66, 0x10, 0x76, 0x06, 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3, 0xe8,
                                    0x00, 0x00, 0x00, 0x00, 0xeb, 0x00, 0xc3}));
  // A leaf Go marks nosplit has no check: `mov %rax,%rcx; ret`.
  EXPECT_FALSE(check(Arch::X86_64, {0x48, 0x89, 0xc1, 0xc3}));
  // A function that returns at once, then has code that jumps to its entry.
  EXPECT_FALSE(check(Arch::X86_64, {0xc3, 0xeb, 0xfd}));
}

// main.work of tests/fixtures/go/gw.go, whose frame (2 KiB of array) is above 128 bytes:
// `lea -N(%rsp),%r12; cmp 0x10(%r14),%r12; jbe` on x86-64, `ldr x16, [x28, #16]; sub
// x17, sp, #N; cmp x17, x16; b.ls` on arm64.
TEST(GoPrologue, GoBuildsMainWorkWithACheckOnBothArchitectures) {
  struct Case {
    const char* arch;
    Arch a;
    uint64_t end;
    const char* g;  // the register the check reads g from
  };
  for (const Case& k : {Case{"x86_64", Arch::X86_64, 0x12, "%r14"}, Case{"arm64", Arch::Arm64, 0x10, "x28"}}) {
    SCOPED_TRACE(k.arch);
    const std::string path = test::fixture(k.arch, "go_gw");
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "no Go toolchain when the tests were built (" << path
                                                     << " missing): scripts/setup.sh installs golang-go";
    auto elf = ElfFile::open(path);
    ASSERT_TRUE(elf.ok()) << elf.error().message;
    std::optional<ElfSymbol> work;
    for (const auto& s : elf->symbols())
      if (s.name == "main.work") work = s;
    ASSERT_TRUE(work);
    auto off = vaddr_to_offset(elf->loads(), work->value);
    ASSERT_TRUE(off);
    auto code = elf->read_bytes(*off, work->size);
    ASSERT_TRUE(code.ok());
    auto d = InsnDecoder::open(k.a);
    ASSERT_TRUE(d.ok());
    auto c = go_stack_check(*d, *code, work->value);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->end, k.end) << c->text;
    EXPECT_NE(c->text.find(k.g), std::string::npos) << c->text;
  }
}

}  // namespace
}  // namespace uprof
