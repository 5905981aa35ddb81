// The first-instruction classes on hand-written encodings of both architectures
// (bytes as objdump prints them; arm64 words as little-endian bytes), and one read
// from a real file.
#include "uprof/resolve/insn/insn_class.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <vector>

namespace uprof {
namespace {

InsnInfo x86(std::initializer_list<uint8_t> bytes, uint64_t offset = 0x1130) {
  std::vector<uint8_t> v(bytes);
  v.resize(16, 0xcc);  // what follows in the file: make sure it is not read as part of the instruction
  return classify_insn(Arch::X86_64, v, offset);
}

InsnInfo a64(uint32_t word, uint64_t offset = 0x1000) {
  std::vector<uint8_t> v{static_cast<uint8_t>(word), static_cast<uint8_t>(word >> 8), static_cast<uint8_t>(word >> 16),
                         static_cast<uint8_t>(word >> 24)};
  return classify_insn(Arch::Arm64, v, offset);
}

TEST(InsnClassX86, SingleSteppedByDefault) {
  EXPECT_EQ(x86({0x8d, 0x04, 0x37}).cls, InsnClass::SingleStepped);          // lea (%rdi,%rsi),%eax
  // The instruction's own bytes, not the next one's ("lea (8d 04 37)", "ret (c3)").
  EXPECT_EQ(x86({0x8d, 0x04, 0x37}).insn, "lea (8d 04 37)");
  EXPECT_EQ(x86({0xc3}).insn, "ret (c3)");
  EXPECT_EQ(x86({0x48, 0x83, 0xec, 0x08}).insn, "arith (48 83 ec 08)");
  EXPECT_EQ(x86({0x48, 0x8b, 0x05, 0x10, 0x20, 0x30, 0x00}).insn, "mov (48 8b 05 10 20 30 00)");  // %rip-relative
  EXPECT_EQ(x86({0xc7, 0x44, 0x24, 0x08, 1, 0, 0, 0}).insn, "mov (c7 44 24 08 01 00 00 00)");   // SIB, disp8, imm32
  EXPECT_EQ(x86({0x48, 0x83, 0xec, 0x08}).cls, InsnClass::SingleStepped);    // sub $0x8,%rsp
  EXPECT_EQ(x86({0x48, 0x89, 0xf8}).cls, InsnClass::SingleStepped);          // mov %rdi,%rax
  EXPECT_EQ(x86({0xc3}).cls, InsnClass::SingleStepped);                      // ret
  EXPECT_EQ(x86({0x48, 0x50}).cls, InsnClass::SingleStepped);                // push with REX.W: not the emulated form
  EXPECT_EQ(x86({0x66, 0x50}).cls, InsnClass::SingleStepped);                // pushw %ax
  EXPECT_EQ(x86({0x0f, 0x05}).cls, InsnClass::SingleStepped);                // syscall: every 0f xx passes the table
  EXPECT_EQ(x86({0xc5, 0xfd, 0xda, 0xc1}).cls, InsnClass::SingleStepped);    // vpminub %ymm1,%ymm0,%ymm0 (VEX)
  InsnInfo endbr = x86({0xf3, 0x0f, 0x1e, 0xfa});
  EXPECT_EQ(endbr.cls, InsnClass::SingleStepped);
  EXPECT_EQ(endbr.insn, "endbr64");
}

TEST(InsnClassX86, PushOfARegisterIsEmulated) {
  EXPECT_EQ(x86({0x55}).cls, InsnClass::Emulated);
  EXPECT_EQ(x86({0x55}).insn, "push %rbp");
  EXPECT_EQ(x86({0x53}).insn, "push %rbx");
  EXPECT_EQ(x86({0x41, 0x57}).cls, InsnClass::Emulated);
  EXPECT_EQ(x86({0x41, 0x57}).insn, "push %r15");
  EXPECT_EQ(x86({0x41, 0x54}).insn, "push %r12");
}

TEST(InsnClassX86, BranchesAndNopsAreEmulated) {
  EXPECT_EQ(x86({0xe8, 0x10, 0x00, 0x00, 0x00}).insn, "call rel32");
  EXPECT_EQ(x86({0xe9, 0x10, 0x00, 0x00, 0x00}).cls, InsnClass::Emulated);
  EXPECT_EQ(x86({0xeb, 0x05}).cls, InsnClass::Emulated);
  EXPECT_EQ(x86({0x74, 0x05}).insn, "jcc rel8");
  EXPECT_EQ(x86({0x0f, 0x84, 0x10, 0x00, 0x00, 0x00}).insn, "jcc rel32");
  EXPECT_EQ(x86({0x90}).cls, InsnClass::Emulated);
  EXPECT_EQ(x86({0x66, 0x90}).insn, "nop2");
  EXPECT_EQ(x86({0xf3, 0x90}).insn, "pause");
  EXPECT_EQ(x86({0x0f, 0x1f, 0x40, 0x00}).insn, "nop4");
  EXPECT_EQ(x86({0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00}).insn, "nop8");
  // gcc -fpatchable-function-entry=5 emits five of these, not a nop5.
  EXPECT_EQ(x86({0x90, 0x90, 0x90, 0x90, 0x90}).insn, "nop1");
}

TEST(InsnClassX86, Nop5IsOptimizedUnlessItCrossesAPage) {
  EXPECT_EQ(x86({0x0f, 0x1f, 0x44, 0x00, 0x00}).cls, InsnClass::Optimized);
  EXPECT_EQ(x86({0x0f, 0x1f, 0x44, 0x00, 0x00}, 0x1ffb).cls, InsnClass::Optimized);  // ends at the page's end
  InsnInfo crossing = x86({0x0f, 0x1f, 0x44, 0x00, 0x00}, 0x1ffc);
  EXPECT_EQ(crossing.cls, InsnClass::Emulated);
  EXPECT_EQ(describe(crossing), "emulated (nop5: crosses a page: not optimized)");
}

TEST(InsnClassX86, RefusedInstructions) {
  EXPECT_EQ(x86({0xcc}).cls, InsnClass::Rejected);                           // int3
  EXPECT_EQ(describe(x86({0xf4})), "rejected (f4 cc cc cc: hlt)");
  EXPECT_EQ(x86({0xf0, 0xff, 0x00}).why, "lock prefix");                     // lock incl (%rax)
  EXPECT_EQ(x86({0x2e, 0x8b, 0x00}).cls, InsnClass::Rejected);               // cs: segment prefix
  EXPECT_EQ(x86({0x3e, 0xff, 0xe0}).cls, InsnClass::Rejected);               // notrack jmp *%rax
  EXPECT_EQ(x86({0x8e, 0xd0}).why, "mov to %ss");
  EXPECT_EQ(x86({0x66, 0xe8, 0x00, 0x00}).why, "branch with a 66 prefix");
  EXPECT_EQ(x86({0x06}).cls, InsnClass::Rejected);                           // push %es: invalid in 64-bit mode
  EXPECT_EQ(classify_insn(Arch::X86_64, {}, 0).cls, InsnClass::Rejected);
  EXPECT_EQ(x86({0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00}).why, "es/cs/ss/ds segment prefix");  // cs nopw: padding
  // What the kernel answers: ENOTSUPP, which <errno.h> does not name.
  EXPECT_EQ(x86({0xf0, 0xff, 0x00}).kernel_errno, 524);
  EXPECT_EQ(errno_name(524), "ENOTSUPP");
  EXPECT_EQ(x86({0xf4}).kernel_errno, 524);
}

// A VEX or EVEX instruction: the kernel looks its opcode byte up in the one-byte table
// (refused where that byte is refused), and takes it for a branch where that byte is a
// branch's (taken by the kernel, refused by uprof: kernel_errno 0).
TEST(InsnClassX86, VexOpcodesAsTheKernelSeesThem) {
  InsnInfo vmovd = x86({0xc5, 0xf9, 0x6e, 0xc6});  // vmovd %esi,%xmm0: 6e is outs
  EXPECT_EQ(vmovd.cls, InsnClass::Rejected);
  EXPECT_EQ(vmovd.kernel_errno, 524);
  EXPECT_EQ(vmovd.why, "VEX opcode 6e, which the kernel looks up in its one-byte table: ins/outs");
  EXPECT_EQ(x86({0xc4, 0xc1, 0x7e, 0x6f, 0x06}).kernel_errno, 524);        // vmovdqu (%r14),%ymm0
  EXPECT_EQ(x86({0xc5, 0xf9, 0xef, 0xc0}).kernel_errno, 524);              // vpxor: ef is out
  EXPECT_EQ(x86({0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x06}).kernel_errno, 524);  // vmovdqu64 (EVEX)
  InsnInfo vpcmpeqb = x86({0xc5, 0xf9, 0x74, 0xc0});  // 74 is je's
  EXPECT_EQ(vpcmpeqb.cls, InsnClass::Rejected);
  EXPECT_EQ(vpcmpeqb.kernel_errno, 0);
  EXPECT_EQ(vpcmpeqb.why, "VEX opcode 74: the kernel would emulate it as a je and skip the instruction");
  EXPECT_NE(x86({0xc5, 0xfd, 0xeb, 0xc1}).why.find("as a jmp"), std::string::npos);   // vpor
  EXPECT_NE(x86({0xc5, 0xf9, 0xe8, 0xc1}).why.find("as a call"), std::string::npos);  // vpsubsb
  EXPECT_EQ(x86({0x62, 0xe2, 0x7d, 0x28, 0x7a, 0xc6}).kernel_errno, 0);     // vpbroadcastb (EVEX): 7a, jp
  // vzeroupper (c5 f8 77) is taken for a ja: measured, the upper halves stay as they were.
  EXPECT_EQ(x86({0xc5, 0xf8, 0x77}).cls, InsnClass::Rejected);
  EXPECT_EQ(x86({0xc5, 0xf9, 0x7e, 0xc0}).cls, InsnClass::Rejected);        // vmovd %xmm0,%eax: 7e, jle
  EXPECT_EQ(x86({0xc5, 0xfd, 0xda, 0xc1}).cls, InsnClass::SingleStepped);   // vpminub: da is no branch
  EXPECT_EQ(x86({0x66, 0x0f, 0x38, 0x00, 0xc1}).cls, InsnClass::SingleStepped);  // pshufb: 0f passes
}

TEST(InsnClassArm64, SteppableInstructionsAreSingleStepped) {
  EXPECT_EQ(a64(0x8b010000).cls, InsnClass::SingleStepped);  // add x0, x0, x1
  EXPECT_EQ(a64(0xa9bf7bfd).cls, InsnClass::SingleStepped);  // stp x29, x30, [sp, #-16]!
  EXPECT_EQ(a64(0xd503201f).insn, "nop");
  EXPECT_EQ(a64(0xd503201f).cls, InsnClass::SingleStepped);
  EXPECT_EQ(a64(0xd503233f).insn, "paciasp");
  EXPECT_EQ(a64(0xd503245f).insn, "bti c");
  EXPECT_EQ(a64(0xd53bd040).cls, InsnClass::SingleStepped);  // mrs x0, tpidr_el0
  EXPECT_EQ(a64(0x8b010000).insn, "8b010000");
}

TEST(InsnClassArm64, BranchesAndAddressesAreSimulated) {
  EXPECT_EQ(a64(0x14000002).insn, "b");
  EXPECT_EQ(a64(0x94000010).insn, "bl");
  EXPECT_EQ(a64(0x54000040).insn, "b.cond");   // b.eq
  EXPECT_EQ(a64(0xb4000040).insn, "cbz");      // cbz x0
  EXPECT_EQ(a64(0x35000040).insn, "cbnz");     // cbnz w0
  EXPECT_EQ(a64(0x36000040).insn, "tbz");
  EXPECT_EQ(a64(0x90000000).insn, "adrp");
  EXPECT_EQ(a64(0x10000000).insn, "adr");
  EXPECT_EQ(a64(0xd65f03c0).insn, "ret");
  EXPECT_EQ(a64(0xd61f0200).insn, "br");       // br x16
  EXPECT_EQ(a64(0xd63f0100).insn, "blr");      // blr x8
  for (uint32_t w : {0x14000002u, 0x54000040u, 0xd65f03c0u, 0x90000000u})
    EXPECT_EQ(a64(w).cls, InsnClass::Emulated) << std::hex << w;
}

TEST(InsnClassArm64, RefusedInstructions) {
  EXPECT_EQ(a64(0x58000040).why, "literal load");       // ldr x0, <literal>: kprobes simulate it, uprobes do not
  EXPECT_EQ(a64(0xc85f7c20).cls, InsnClass::Rejected);  // ldxr x0, [x1]
  EXPECT_EQ(a64(0xd4000001).cls, InsnClass::Rejected);  // svc #0
  EXPECT_EQ(a64(0xd4200000).cls, InsnClass::Rejected);  // brk #0
  EXPECT_EQ(a64(0xd53b4220).why, "mrs of DAIF");        // mrs x0, daif
  EXPECT_EQ(a64(0xd503207f).cls, InsnClass::Rejected);  // wfi
  EXPECT_EQ(a64(0xd65f0bff).cls, InsnClass::Rejected);  // retaa: a branch the kernel does not simulate
  EXPECT_EQ(a64(0xd503201f, 0x1002).why, "offset not 4-byte aligned");
  EXPECT_EQ(a64(0xc85f7c20).kernel_errno, EINVAL);
  EXPECT_EQ(a64(0xd503201f, 0x1002).kernel_errno, EINVAL);
  // A probe never moves past an exclusive (probe_placement.h); a literal load is fine to pass.
  EXPECT_TRUE(a64(0xc85f7c20).keeps_site);
  EXPECT_FALSE(a64(0x58000040).keeps_site);
}

TEST(InsnClass, ReadsTheProbedFile) {
  auto path = std::filesystem::temp_directory_path() / ("uprof_insn_" + std::to_string(getpid()));
  {
    std::ofstream out(path, std::ios::binary);
    const unsigned char bytes[] = {0xc3, 0x55, 0x48, 0x89, 0xe5, 0x0f, 0x1f, 0x44, 0x00, 0x00};
    out.write(reinterpret_cast<const char*>(bytes), sizeof bytes);
  }
  auto push = classify_probe_site(path, Arch::X86_64, 1);
  ASSERT_TRUE(push.ok()) << push.error().message;
  EXPECT_EQ(describe(*push), "emulated (push %rbp)");
  auto nop5 = classify_probe_site(path, Arch::X86_64, 5);
  ASSERT_TRUE(nop5.ok());
  EXPECT_EQ(nop5->cls, InsnClass::Optimized);
  auto past = classify_probe_site(path, Arch::X86_64, 100);
  ASSERT_TRUE(past.ok());
  EXPECT_EQ(past->cls, InsnClass::Rejected);
  std::filesystem::remove(path);
  EXPECT_FALSE(classify_probe_site(path, Arch::X86_64, 0).ok());
}

}  // namespace
}  // namespace uprof
