// record -g's pure parts in the drain: a BPF STACK record's pt_regs as registers
// (drain/unwind/user_stack.h), the frame-pointer walk (frame_pointers.h) over a
// hand-laid stack, --stack-min on the perf engine (stack_min_filter.h), and the return
// addresses the return trampoline stands for (return_trampolines.h).
#include <gtest/gtest.h>

#include <cstring>

#include "uprof/drain/unwind/frame_pointers.h"
#include "uprof/drain/unwind/return_trampolines.h"
#include "uprof/drain/unwind/stack_min_filter.h"
#include "uprof/drain/unwind/user_stack.h"

namespace uprof {
namespace {

std::vector<std::byte> words(std::initializer_list<uint64_t> w) {
  std::vector<std::byte> b(w.size() * 8);
  std::size_t i = 0;
  for (uint64_t v : w) std::memcpy(b.data() + 8 * i++, &v, 8);
  return b;
}

TEST(UserStack, X86PtRegsGiveTheRegistersByPerfIndex) {
  // struct pt_regs in words: r15 r14 r13 r12 bp bx r11 r10 r9 r8 ax cx dx si di orig_ax ip cs flags sp ss
  std::vector<uint64_t> w(21);
  for (std::size_t i = 0; i < w.size(); i++) w[i] = 0x1000 + i;
  std::vector<std::byte> regs(w.size() * 8);
  std::memcpy(regs.data(), w.data(), regs.size());
  const auto stack = words({0x401234, 7});
  UserStack s = user_stack_from_pt_regs(Arch::X86_64, regs, stack);
  EXPECT_EQ(s.pc(), 0x1000u + 16);  // ip
  EXPECT_EQ(s.sp(), 0x1000u + 19);  // sp
  EXPECT_EQ(s.reg(6), 0x1000u + 4);  // bp
  EXPECT_EQ(s.reg(23), 0x1000u + 0);  // r15
  EXPECT_FALSE(s.reg(12).has_value());  // ds: not in pt_regs
  // The copy is addressed from sp up; a word past it is not there.
  EXPECT_EQ(s.load(s.sp()), 0x401234u);
  EXPECT_EQ(s.load(s.sp() + 8), 7u);
  EXPECT_FALSE(s.load(s.sp() + 9).has_value());
  EXPECT_FALSE(s.load(s.sp() - 8).has_value());
}

TEST(UserStack, Arm64PtRegsAreThePerfOrder) {
  std::vector<uint64_t> w(34);
  for (std::size_t i = 0; i < w.size(); i++) w[i] = 0x2000 + i;
  std::vector<std::byte> regs(w.size() * 8);
  std::memcpy(regs.data(), w.data(), regs.size());
  UserStack s = user_stack_from_pt_regs(Arch::Arm64, regs, {});
  EXPECT_EQ(s.reg(30), 0x2000u + 30);  // lr
  EXPECT_EQ(s.sp(), 0x2000u + 31);
  EXPECT_EQ(s.pc(), 0x2000u + 32);
}

// A stack as a function's entry sees it, built with frame pointers:
//   sp      -> ret into caller (0xc0)
//   sp+8       caller's locals
//   sp+16   <- rbp (caller's frame): saved rbp of main = sp+32, ret into main (0xa0)
//   sp+32   <- main's frame: saved rbp 0 (the end), ret into libc (0x11)
TEST(FramePointers, AnEntryWalksFromItsReturnAddressUpTheChain) {
  const uint64_t sp = 0x7ffe0000;
  const auto bytes = words({0xc0, 0, sp + 32, 0xa0, 0, 0x11});
  UserStack s{.arch = Arch::X86_64, .bytes = bytes};
  auto set = [&s](unsigned i, uint64_t v) {
    s.regs[i] = v;
    s.mask |= uint64_t{1} << i;
  };
  set(arch_info(Arch::X86_64).sp_reg, sp);
  set(arch_info(Arch::X86_64).ip_reg, 0x5000);
  set(frame_pointer_reg(Arch::X86_64), sp + 16);
  EXPECT_EQ(walk_frame_pointers(s, false, 64), (std::vector<uint64_t>{0x5000, 0xc0, 0xa0, 0x11}));
  // A return probe's pc is in the caller already: no entry return address.
  EXPECT_EQ(walk_frame_pointers(s, true, 64), (std::vector<uint64_t>{0x5000, 0xa0, 0x11}));
  EXPECT_EQ(walk_frame_pointers(s, false, 2), (std::vector<uint64_t>{0x5000, 0xc0}));
  // A frame pointer below the stack pointer (rbp used as a plain register) ends it.
  set(frame_pointer_reg(Arch::X86_64), 8);
  EXPECT_EQ(walk_frame_pointers(s, false, 64), (std::vector<uint64_t>{0x5000, 0xc0}));
}

TEST(StackMinFilter, DropsTheStacksOfShortCallsInTimeOrder) {
  CapturePlan plan;
  plan.call_graph = CallGraphPlan{.on = true, .stack_min_ns = 1000};
  plan.probes = {ProbeCapture{.probe = 0, .stack = StackCapture::EntryTime},
                 ProbeCapture{.probe = 1, .is_return = true, .stack = StackCapture::IfLong, .kind = ProbeKind::Return}};
  StackMinFilter f(plan);
  auto ev = [](uint32_t probe, uint32_t tid, uint64_t time, bool stack) {
    Event e;
    e.probe = probe;
    e.pid = e.tid = tid;
    e.time = time;
    if (stack) e.stack = {StackFrame{.object = 1, .offset = 0x1234}};
    return e;
  };
  // Thread 1: outer (0..5000) around inner (100..600): inner is short, outer long.
  // Thread 2's call (50..2050) interleaves: the threads keep apart.
  EXPECT_FALSE(f.drop_stack(ev(0, 1, 0, false)));
  EXPECT_FALSE(f.drop_stack(ev(0, 2, 50, false)));
  EXPECT_FALSE(f.drop_stack(ev(0, 1, 100, false)));
  EXPECT_TRUE(f.drop_stack(ev(1, 1, 600, true)));    // 500 ns
  EXPECT_FALSE(f.drop_stack(ev(1, 2, 2050, true)));  // 2000 ns
  EXPECT_FALSE(f.drop_stack(ev(1, 1, 5000, true)));  // 5000 ns
  // A return whose entry came before the recording has no duration: no stack.
  EXPECT_TRUE(f.drop_stack(ev(1, 3, 9000, true)));
  EXPECT_EQ(f.dropped(), 2u);
}

// x86-64: the entry's return address is found again only at its own slot ([sp] of the
// entry), by the latest entry there before the hit.
TEST(ReturnTrampolines, X86FindsTheSlotItself) {
  ReturnTrampolines t(true);
  t.note(7, 0x7ffd1000, 100, 0x401111);  // a call from spinner
  t.note(7, 0x7ffd1000, 300, 0x402222);  // the next call at the same depth, from sleeper
  EXPECT_EQ(t.find(7, 0x7ffd1000, 200), 0x401111u);
  EXPECT_EQ(t.find(7, 0x7ffd1000, 400), 0x402222u);
  EXPECT_FALSE(t.find(7, 0x7ffd1000, 50).has_value()) << "no entry before the hit";
  EXPECT_FALSE(t.find(7, 0x7ffd0ff8, 400).has_value()) << "another slot";
  EXPECT_FALSE(t.find(8, 0x7ffd1000, 400).has_value()) << "another thread";
  t.thread_exited(7);
  EXPECT_FALSE(t.find(7, 0x7ffd1000, 400).has_value());
}

// arm64: why_slow's work is entered with sp 0xffffd0a0 and x30 into sleeper; its
// prologue (`stp x29, x30, [sp, #-64]!`) saves the trampoline at 0xffffd068. A probe
// inside it (libc's clock_nanosleep) reads it there: the call whose frame holds it is
// the nearest entry at or above the address, not a deeper one (its entry sp is below).
TEST(ReturnTrampolines, Arm64FindsTheCallWhoseFrameHoldsTheSlot) {
  ReturnTrampolines t(false);
  t.note(3, 0xffffd0e0, 10, 0xaaaa0500);  // main's call of a probed outer function
  t.note(3, 0xffffd0a0, 20, 0xaaaa0904);  // work, called by sleeper
  t.note(3, 0xffffd020, 30, 0xbbbb0100);  // a deeper probed call made (and done) before
  EXPECT_EQ(t.find(3, 0xffffd068, 40), 0xaaaa0904u);
  EXPECT_EQ(t.find(3, 0xffffd0a0, 40), 0xaaaa0904u) << "a slot at the entry sp itself";
  EXPECT_EQ(t.find(3, 0xffffd0b8, 40), 0xaaaa0500u) << "the outer call's frame";
  EXPECT_FALSE(t.find(3, 0xffffd0e8, 40).has_value()) << "above every noted frame";
  EXPECT_FALSE(t.find(3, 0xffffd068, 15).has_value()) << "work was entered after the hit";
}

}  // namespace
}  // namespace uprof
