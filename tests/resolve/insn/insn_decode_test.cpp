// Capstone as uprof reads it: lengths, written registers (sub-registers as the whole
// register), memory writes and branches, on hand-assembled bytes of both arches.
#include "uprof/resolve/insn/insn_decode.h"

#include <gtest/gtest.h>

#include <vector>

namespace uprof {
namespace {

uint64_t bit(Arch a, std::string_view reg) { return 1ull << find_reg_by_name(arch_info(a), reg)->perf_index; }

DecodedInsn one(const InsnDecoder& d, std::vector<uint8_t> bytes, uint64_t addr = 0x1000) {
  auto i = d.decode(bytes, addr);
  EXPECT_TRUE(i.has_value());
  return i.value_or(DecodedInsn{});
}

TEST(InsnDecode, X86LengthsWritesAndBranches) {
  auto d = InsnDecoder::open(Arch::X86_64);
  ASSERT_TRUE(d.ok()) << d.error().message;
  auto endbr = one(*d, {0xf3, 0x0f, 0x1e, 0xfa});
  EXPECT_EQ(endbr.length, 4);
  EXPECT_EQ(endbr.text, "endbr64");
  EXPECT_EQ(endbr.regs_written, 0u);
  EXPECT_FALSE(endbr.writes_memory);
  EXPECT_FALSE(endbr.changes_flow);

  auto push = one(*d, {0x55});
  EXPECT_EQ(push.text, "pushq %rbp");
  EXPECT_TRUE(d->writes_sp(push));
  EXPECT_TRUE(push.writes_memory);

  auto test = one(*d, {0x48, 0x85, 0xff});  // test %rdi,%rdi: flags only
  EXPECT_EQ(test.length, 3);
  EXPECT_EQ(test.regs_written, 0u);

  auto mov = one(*d, {0x89, 0xf8});  // mov %edi,%eax: writes rax
  EXPECT_EQ(mov.regs_written, bit(Arch::X86_64, "ax"));
  auto sub = one(*d, {0x48, 0x83, 0xec, 0x18});  // sub $0x18,%rsp
  EXPECT_TRUE(d->writes_sp(sub));
  auto store = one(*d, {0x89, 0x7c, 0x24, 0xfc});  // mov %edi,-0x4(%rsp)
  EXPECT_TRUE(store.writes_memory);
  EXPECT_FALSE(d->writes_sp(store));

  EXPECT_FALSE(one(*d, {0xf7, 0x03, 0x00, 0x80, 0x00, 0x00}).writes_memory);  // testl $0x8000,(%rbx)
  EXPECT_FALSE(one(*d, {0x48, 0x63, 0xff}).writes_memory);                    // movslq %edi,%rdi
  EXPECT_TRUE(one(*d, {0xf3, 0xa4}).writes_memory);                           // rep movsb
  auto je = one(*d, {0x74, 0x10}, 0x1000);  // je 0x1012
  EXPECT_TRUE(je.changes_flow);
  EXPECT_EQ(je.direct_target, 0x1012u);
  EXPECT_TRUE(je.conditional);
  EXPECT_FALSE(one(*d, {0xeb, 0x10}).conditional);  // jmp rel8
  auto call = one(*d, {0xe8, 0x00, 0x01, 0x00, 0x00}, 0x2000);
  EXPECT_EQ(call.direct_target, 0x2105u);
  EXPECT_TRUE(call.writes_memory);
  auto jmp_reg = one(*d, {0xff, 0xe0});  // jmp *%rax
  EXPECT_TRUE(jmp_reg.indirect_jump);
  EXPECT_FALSE(jmp_reg.direct_target.has_value());
  auto notrack = one(*d, {0x3e, 0xff, 0xe0});  // notrack jmp *%rax
  EXPECT_TRUE(notrack.indirect_jump);
  EXPECT_FALSE(d->decode(std::vector<uint8_t>{0x0f}, 0).has_value());  // cut short
}

TEST(InsnDecode, Arm64WritesAndBranches) {
  auto d = InsnDecoder::open(Arch::Arm64);
  ASSERT_TRUE(d.ok()) << d.error().message;
  auto bti = one(*d, {0x5f, 0x24, 0x03, 0xd5});  // bti c
  EXPECT_EQ(bti.length, 4);
  EXPECT_EQ(bti.regs_written, 0u);
  EXPECT_FALSE(bti.changes_flow);
  auto stp = one(*d, {0xfd, 0x7b, 0xbf, 0xa9});  // stp x29, x30, [sp, #-16]!
  EXPECT_TRUE(stp.writes_memory);
  EXPECT_TRUE(d->writes_sp(stp));
  auto mov = one(*d, {0xe0, 0x03, 0x01, 0x2a});  // mov w0, w1: writes x0
  EXPECT_EQ(mov.regs_written, bit(Arch::Arm64, "x0"));
  auto bl = one(*d, {0x02, 0x00, 0x00, 0x94}, 0x4000);  // bl 0x4008
  EXPECT_TRUE(bl.changes_flow);
  EXPECT_EQ(bl.direct_target, 0x4008u);
  EXPECT_TRUE(bl.is_call);
  EXPECT_FALSE(bl.indirect_jump);
  auto blr = one(*d, {0x00, 0x02, 0x3f, 0xd6});  // blr x16
  EXPECT_TRUE(blr.is_call);
  EXPECT_FALSE(blr.indirect_jump);
  auto ret = one(*d, {0xc0, 0x03, 0x5f, 0xd6});
  EXPECT_TRUE(ret.is_return);
  EXPECT_FALSE(ret.indirect_jump);
  auto cbz = one(*d, {0x40, 0x00, 0x00, 0xb4}, 0x4000);  // cbz x0, 0x4008
  EXPECT_EQ(cbz.direct_target, 0x4008u);
  EXPECT_TRUE(cbz.conditional);
  EXPECT_FALSE(bl.conditional);
  EXPECT_FALSE(one(*d, {0x02, 0x00, 0x00, 0x14}, 0x4000).conditional);  // b 0x4008
  auto br = one(*d, {0x00, 0x02, 0x1f, 0xd6});  // br x16
  EXPECT_TRUE(br.indirect_jump);
}

}  // namespace
}  // namespace uprof
