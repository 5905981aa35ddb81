#include "uprof/arch/syscall_kinds.h"

#include <algorithm>

namespace uprof {
namespace {

using K = OffCpuKind;

// x86-64's 64-bit ABI (arch/x86/entry/syscalls/syscall_64.tbl). Only calls that block for
// a reason worth naming; the rest are Syscall.
constexpr SyscallKind kX86_64[] = {
    // Lock: a futex (pthread mutexes, condition variables, joins), a file or SysV lock.
    {"futex", 202, K::Lock}, {"futex_waitv", 449, K::Lock}, {"futex_wake", 454, K::Lock},
    {"futex_wait", 455, K::Lock}, {"futex_requeue", 456, K::Lock}, {"flock", 73, K::Lock},
    {"semop", 65, K::Lock}, {"semtimedop", 220, K::Lock},
    // Sleep: a timer or a signal.
    {"nanosleep", 35, K::Sleep}, {"clock_nanosleep", 230, K::Sleep}, {"pause", 34, K::Sleep},
    {"rt_sigsuspend", 130, K::Sleep}, {"rt_sigtimedwait", 128, K::Sleep},
    // Io: files, pipes, sockets, and waiting for any of them to be ready.
    {"read", 0, K::Io}, {"write", 1, K::Io}, {"open", 2, K::Io}, {"poll", 7, K::Io},
    {"pread64", 17, K::Io}, {"pwrite64", 18, K::Io}, {"readv", 19, K::Io}, {"writev", 20, K::Io},
    {"select", 23, K::Io}, {"msync", 26, K::Io}, {"sendfile", 40, K::Io}, {"connect", 42, K::Io},
    {"accept", 43, K::Io}, {"sendto", 44, K::Io}, {"recvfrom", 45, K::Io}, {"sendmsg", 46, K::Io},
    {"recvmsg", 47, K::Io}, {"msgsnd", 69, K::Io}, {"msgrcv", 70, K::Io}, {"fsync", 74, K::Io},
    {"fdatasync", 75, K::Io}, {"sync", 162, K::Io}, {"io_getevents", 208, K::Io},
    {"epoll_wait", 232, K::Io}, {"mq_timedsend", 242, K::Io}, {"mq_timedreceive", 243, K::Io},
    {"openat", 257, K::Io}, {"pselect6", 270, K::Io}, {"ppoll", 271, K::Io}, {"splice", 275, K::Io},
    {"tee", 276, K::Io}, {"sync_file_range", 277, K::Io}, {"epoll_pwait", 281, K::Io},
    {"accept4", 288, K::Io}, {"preadv", 295, K::Io}, {"pwritev", 296, K::Io}, {"recvmmsg", 299, K::Io},
    {"syncfs", 306, K::Io}, {"sendmmsg", 307, K::Io}, {"copy_file_range", 326, K::Io},
    {"preadv2", 327, K::Io}, {"pwritev2", 328, K::Io}, {"io_pgetevents", 333, K::Io},
    {"io_uring_enter", 426, K::Io}, {"openat2", 437, K::Io}, {"epoll_pwait2", 441, K::Io},
};

// arm64 uses the generic table (include/uapi/asm-generic/unistd.h): no open, poll,
// select, epoll_wait or pause (openat, ppoll, pselect6, epoll_pwait stand for them).
constexpr SyscallKind kArm64[] = {
    {"futex", 98, K::Lock}, {"futex_waitv", 449, K::Lock}, {"futex_wake", 454, K::Lock},
    {"futex_wait", 455, K::Lock}, {"futex_requeue", 456, K::Lock}, {"flock", 32, K::Lock},
    {"semop", 193, K::Lock}, {"semtimedop", 192, K::Lock},
    {"nanosleep", 101, K::Sleep}, {"clock_nanosleep", 115, K::Sleep}, {"rt_sigsuspend", 133, K::Sleep},
    {"rt_sigtimedwait", 137, K::Sleep},
    {"io_getevents", 4, K::Io}, {"epoll_pwait", 22, K::Io}, {"openat", 56, K::Io}, {"read", 63, K::Io},
    {"write", 64, K::Io}, {"readv", 65, K::Io}, {"writev", 66, K::Io}, {"pread64", 67, K::Io},
    {"pwrite64", 68, K::Io}, {"preadv", 69, K::Io}, {"pwritev", 70, K::Io}, {"sendfile", 71, K::Io},
    {"pselect6", 72, K::Io}, {"ppoll", 73, K::Io}, {"splice", 76, K::Io}, {"tee", 77, K::Io},
    {"sync", 81, K::Io}, {"fsync", 82, K::Io}, {"fdatasync", 83, K::Io}, {"sync_file_range", 84, K::Io},
    {"mq_timedsend", 182, K::Io}, {"mq_timedreceive", 183, K::Io}, {"msgrcv", 188, K::Io},
    {"msgsnd", 189, K::Io}, {"accept", 202, K::Io}, {"connect", 203, K::Io}, {"sendto", 206, K::Io},
    {"recvfrom", 207, K::Io}, {"sendmsg", 211, K::Io}, {"recvmsg", 212, K::Io}, {"msync", 227, K::Io},
    {"accept4", 242, K::Io}, {"recvmmsg", 243, K::Io}, {"syncfs", 267, K::Io}, {"sendmmsg", 269, K::Io},
    {"copy_file_range", 285, K::Io}, {"preadv2", 286, K::Io}, {"pwritev2", 287, K::Io},
    {"io_pgetevents", 292, K::Io}, {"io_uring_enter", 426, K::Io}, {"openat2", 437, K::Io},
    {"epoll_pwait2", 441, K::Io},
};

constexpr PerArch<std::span<const SyscallKind>> kTables{.x86_64 = kX86_64, .arm64 = kArm64};

// ENOSYS is 38 on both; only x86-64 needs it (syscall_kinds.h).
constexpr PerArch<SyscallRegs> kRegs{
    .x86_64 = {.nr_offset = 120, .nr_size = 8, .check_busy = true, .busy_offset = 80, .busy_value = -38},
    .arm64 = {.nr_offset = 280, .nr_size = 4, .check_busy = false, .busy_offset = 0, .busy_value = 0},
};

}  // namespace

std::span<const SyscallKind> syscall_kinds(Arch a) { return kTables[a]; }

OffCpuKind syscall_kind(Arch a, uint32_t number) {
  for (const SyscallKind& s : kTables[a])
    if (s.number == number) return s.kind;
  return OffCpuKind::Syscall;
}

std::optional<SyscallKind> find_syscall(Arch a, std::string_view name) {
  for (const SyscallKind& s : kTables[a])
    if (s.name == name) return s;
  return std::nullopt;
}

const SyscallRegs& syscall_regs(Arch a) { return kRegs[a]; }

}  // namespace uprof
