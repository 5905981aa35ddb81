// The system call -> off-CPU kind tables of both architectures (arch/syscall_kinds.h),
// checked against the numbers the kernel's tables give, on any host.
#include "uprof/arch/syscall_kinds.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace uprof {
namespace {

struct Known {
  const char* name;
  uint32_t x86_64, arm64;
  OffCpuKind kind;
};
// From arch/x86/entry/syscalls/syscall_64.tbl and include/uapi/asm-generic/unistd.h.
constexpr Known kKnown[] = {
    {"futex", 202, 98, OffCpuKind::Lock},         {"read", 0, 63, OffCpuKind::Io},
    {"write", 1, 64, OffCpuKind::Io},             {"nanosleep", 35, 101, OffCpuKind::Sleep},
    {"clock_nanosleep", 230, 115, OffCpuKind::Sleep}, {"ppoll", 271, 73, OffCpuKind::Io},
    {"recvmsg", 47, 212, OffCpuKind::Io},         {"epoll_pwait", 281, 22, OffCpuKind::Io},
    {"futex_wait", 455, 455, OffCpuKind::Lock},   {"flock", 73, 32, OffCpuKind::Lock},
};

TEST(SyscallKinds, KnownCallsOnBothArchitectures) {
  for (const Known& k : kKnown) {
    SCOPED_TRACE(k.name);
    EXPECT_EQ(syscall_kind(Arch::X86_64, k.x86_64), k.kind);
    EXPECT_EQ(syscall_kind(Arch::Arm64, k.arm64), k.kind);
    ASSERT_TRUE(find_syscall(Arch::X86_64, k.name));
    EXPECT_EQ(find_syscall(Arch::X86_64, k.name)->number, k.x86_64);
    ASSERT_TRUE(find_syscall(Arch::Arm64, k.name));
    EXPECT_EQ(find_syscall(Arch::Arm64, k.name)->number, k.arm64);
  }
}

TEST(SyscallKinds, UnlistedCallsAreSyscall) {
  EXPECT_EQ(syscall_kind(Arch::X86_64, 61), OffCpuKind::Syscall);  // wait4
  EXPECT_EQ(syscall_kind(Arch::Arm64, 260), OffCpuKind::Syscall);  // wait4
  EXPECT_EQ(syscall_kind(Arch::X86_64, 16), OffCpuKind::Syscall);  // ioctl
  EXPECT_EQ(syscall_kind(Arch::X86_64, kSyscallTableSize + 5), OffCpuKind::Syscall);
  // arm64 has no open, poll or pause: their x86-64 names are not in its table.
  EXPECT_FALSE(find_syscall(Arch::Arm64, "open"));
  EXPECT_FALSE(find_syscall(Arch::Arm64, "poll"));
}

// A number or a name twice in one table would make the lookup depend on the order.
TEST(SyscallKinds, EachTableNamesANumberOnceAndFitsTheMap) {
  for (Arch a : {Arch::X86_64, Arch::Arm64}) {
    std::set<uint32_t> numbers;
    std::set<std::string> names;
    for (const SyscallKind& s : syscall_kinds(a)) {
      EXPECT_TRUE(numbers.insert(s.number).second) << s.name;
      EXPECT_TRUE(names.insert(std::string(s.name)).second) << s.name;
      EXPECT_LT(s.number, kSyscallTableSize) << s.name;
      EXPECT_NE(s.kind, OffCpuKind::Runnable) << s.name;  // a blocked thread is not waiting for a CPU
    }
    EXPECT_GT(numbers.size(), 40u);
  }
}

// Where the kernel keeps the number in struct pt_regs: x86-64 orig_ax (the 16th of its
// 8-byte fields) with ax (the 11th) at -ENOSYS; arm64 syscallno after the 34 user
// registers and orig_x0.
TEST(SyscallKinds, WhereTheNumberIsInPtRegs) {
  const SyscallRegs& x86 = syscall_regs(Arch::X86_64);
  EXPECT_EQ(x86.nr_offset, 15 * 8);
  EXPECT_EQ(x86.nr_size, 8);
  EXPECT_TRUE(x86.check_busy);
  EXPECT_EQ(x86.busy_offset, 10 * 8);
  EXPECT_EQ(x86.busy_value, -38);
  const SyscallRegs& arm = syscall_regs(Arch::Arm64);
  EXPECT_EQ(arm.nr_offset, 34 * 8 + 8);
  EXPECT_EQ(arm.nr_size, 4);
  EXPECT_FALSE(arm.check_busy);
}

}  // namespace
}  // namespace uprof
