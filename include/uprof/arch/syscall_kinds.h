// record --off-cpu: what a thread blocked in, per architecture, as data. The BPF engine's
// scheduler program reads the system call number a blocked thread is in from the kernel's
// saved user registers (its struct pt_regs) and looks its kind up in a table user space
// writes from here:
//   x86-64 futex (202), arm64 futex (98)                   -> Lock
//   x86-64 read (0), arm64 read (63), poll, recvmsg, fsync -> Io
//   x86-64 nanosleep (35), clock_nanosleep (230)           -> Sleep
//   any other call (wait4, ioctl, ...)                     -> Syscall
//   blocked outside a system call (a page fault)           -> Other
// The numbers are the kernel's: arch/x86/entry/syscalls/syscall_64.tbl for x86-64 (the
// 64-bit ABI; a 32-bit or x32 process's numbers are not these) and
// include/uapi/asm-generic/unistd.h for arm64, as Linux 6.7+ defines them (futex_wait and
// kin are 6.7's, numbered alike on both).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "uprof/arch/arch.h"
#include "uprof/model/recording.h"

namespace uprof {

struct SyscallKind {
  std::string_view name;
  uint32_t number;
  OffCpuKind kind;
};

// The blocking system calls uprof names a kind for, on `a`; every call not listed is
// OffCpuKind::Syscall.
std::span<const SyscallKind> syscall_kinds(Arch a);
// The kind of system call `number` on `a` (Syscall when the table does not list it).
OffCpuKind syscall_kind(Arch a, uint32_t number);
// A listed call by name ("futex"), for tests and messages.
std::optional<SyscallKind> find_syscall(Arch a, std::string_view name);

// Where the kernel keeps, in a blocked thread's saved user registers (struct pt_regs,
// what bpf_task_pt_regs gives), the number of the system call it is in, and how to tell
// that it is in one at all:
//   x86-64  orig_ax (byte 120) holds the number, and ax (byte 80) holds -ENOSYS from the
//           system call's entry until it returns (entry_SYSCALL_64 pushes it); an
//           exception (a page fault) puts its error code in orig_ax and leaves the user's
//           ax, so the -ENOSYS test tells the two apart
//   arm64   syscallno (byte 280, 32 bits) holds the number in a system call and
//           NO_SYSCALL (-1) after any other entry from user space: every entry from EL0
//           sets it (entry.S's kernel_entry, in C since 5.12) and do_el0_svc overwrites
//           it; the kernel's own in_syscall() is this test
struct SyscallRegs {
  uint16_t nr_offset = 0;    // the number's byte offset in struct pt_regs
  uint8_t nr_size = 8;       // its bytes (a signed value: negative = in no system call)
  bool check_busy = false;   // and the value at busy_offset must be busy_value
  uint16_t busy_offset = 0;
  int64_t busy_value = 0;
};
const SyscallRegs& syscall_regs(Arch a);

// The table's size in the BPF map: numbers at or past it are Syscall.
inline constexpr uint32_t kSyscallTableSize = 1024;

}  // namespace uprof
