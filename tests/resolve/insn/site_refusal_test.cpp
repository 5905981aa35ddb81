// The line that names a refused site: function, file, offset, the instruction
// disassembled with its bytes, the reason and the kernel's answer.
#include "uprof/resolve/insn/site_refusal.h"

#include <gtest/gtest.h>

#include <vector>

namespace uprof {
namespace {

const std::string kLibc = "/lib/x86_64-linux-gnu/libc.so.6";
// pthread_spin_lock in Debian 12's libc: lock decl (%rdi); jne ...; xor %eax,%eax; ret
const std::vector<uint8_t> kSpin{0xf0, 0xff, 0x0f, 0x75, 0x0b, 0x31, 0xc0, 0xc3};

TEST(SiteRefusal, NamesTheFunctionTheInstructionAndWhy) {
  auto r = site_refusal(Arch::X86_64, kLibc, "pthread_spin_lock", 0, 0x8ff70, kSpin);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->insn, "lock decl (%rdi)");
  EXPECT_EQ(r->bytes, (std::vector<uint8_t>{0xf0, 0xff, 0x0f}));
  EXPECT_EQ(refusal_line(*r),
            "pthread_spin_lock (/lib/x86_64-linux-gnu/libc.so.6, offset 0x8ff70): the kernel refuses to probe its "
            "first instruction, lock decl (%rdi) [f0 ff 0f]: lock prefix (ENOTSUPP)");
}

TEST(SiteRefusal, AProbableSiteHasNone) {
  EXPECT_FALSE(site_refusal(Arch::X86_64, kLibc, "f", 0, 0x1000, std::vector<uint8_t>{0x55, 0xc3}));
  EXPECT_FALSE(site_refusal(Arch::X86_64, kLibc, "f", 3, 0x1003, std::vector<uint8_t>(kSpin.begin() + 3, kSpin.end())));
}

TEST(SiteRefusal, WhereUprofRefusesAndWhereTheSiteIsInside) {
  const std::vector<uint8_t> vpcmpeqb{0xc5, 0xf9, 0x74, 0xc0, 0xc3};
  auto r = site_refusal(Arch::X86_64, "/bin/x", "vexf", 0x10, 0x1149, vpcmpeqb);
  ASSERT_TRUE(r);
  EXPECT_EQ(refusal_line(*r),
            "vexf+0x10 (/bin/x, offset 0x1149): uprof does not probe the instruction, vpcmpeqb %xmm0, %xmm0, %xmm0 "
            "[c5 f9 74 c0]: VEX opcode 74: the kernel would emulate it as a je and skip the instruction");
  // A raw offset outside every function; arm64's answer is EINVAL.
  const std::vector<uint8_t> ldxr{0x20, 0x7c, 0x5f, 0xc8};  // ldxr x0, [x1]
  auto a = site_refusal(Arch::Arm64, "/bin/y", "", 0, 0x700, ldxr);
  ASSERT_TRUE(a);
  EXPECT_EQ(refusal_line(*a),
            "/bin/y at offset 0x700: the kernel refuses to probe the instruction, ldxr x0, [x1] [20 7c 5f c8]: "
            "exclusive or ordered load/store (EINVAL)");
}

// An engine the kernel refused where uprof predicted nothing: the same line, with what
// the engine knows.
TEST(SiteRefusal, TheLineAnEngineBuilds) {
  EXPECT_EQ(refused_site_line(Arch::X86_64, "/bin/x", "f", 0, 0x1000, std::vector<uint8_t>{0x55, 0xc3}, 524,
                              "the kernel refused it at attach"),
            "f (/bin/x, offset 0x1000): the kernel refuses to probe its first instruction, pushq %rbp [55]: the kernel "
            "refused it at attach (ENOTSUPP)");
  // uprof's own reason, when it has one
  EXPECT_EQ(refused_site_line(Arch::X86_64, "/bin/x", "f", 0, 0x1000, kSpin, 524, "?"),
            "f (/bin/x, offset 0x1000): the kernel refuses to probe its first instruction, lock decl (%rdi) [f0 ff 0f]: "
            "lock prefix (ENOTSUPP)");
  // read from the file, for an engine that has only the path and the offset
  EXPECT_EQ(refused_site_line(Arch::X86_64, "/nonexistent/x", "f", 0, 0x1000, 524, "the kernel refused it at attach"),
            "f (/nonexistent/x, offset 0x1000): the kernel refuses to probe its first instruction: the kernel refused "
            "it at attach (ENOTSUPP)");
  // bytes that do not decode are shown as bytes
  EXPECT_NE(refused_site_line(Arch::X86_64, "/bin/x", "", 0, 0x10, std::vector<uint8_t>{0x0f, 0x04}, 524, "?")
                .find("[0f 04] (which does not decode)"),
            std::string::npos);
}

}  // namespace
}  // namespace uprof
