// Which implementation an IFUNC resolves to, as the dynamic loader decides it.
//
// An IFUNC symbol (STT_GNU_IFUNC) is the address of a resolver, not of the function:
// the loader runs the resolver when it binds a reference, and the reference then points
// where the resolver said. In Debian 12's libc, `strlen` (0x9f1c0) picks one of
// __strlen_sse2, __strlen_avx2, __strlen_avx2_rtm, __strlen_evex and __strlen_evex512
// from the CPU's features and GLIBC_TUNABLES. A probe on the resolver sees no call;
// uprof probes what the loader picked, and knows it two ways:
//
//  - Ask the loader (a program uprof runs, `record -a`, `uprof probe`): a child process
//    (fork) dlopen()s the library and dlsym()s the name, which runs the resolver as
//    binding a reference does; the address it gets, less the library's load bias, is
//    the implementation's address in the file. The child has uprof's CPU and
//    environment, which the workload inherits. Nothing of the library runs in uprof
//    itself; what its constructors do stays in the child, and the child is never
//    privileged: before dlopen it becomes the user who ran sudo, else nobody (no
//    groups, no capabilities, PR_SET_NO_NEW_PRIVS; util/sudo_user.h), and that user
//    must be able to read the file, else the answer is an error that says so.
//  - Read what a running process's loader wrote (-p PID): the slots that the library's
//    IRELATIVE relocations fill (those whose addend is this resolver) and the GOT slots
//    that name the symbol in every file the process maps (pointer_relocs.h), read from
//    /proc/PID/mem. A slot counts when it points into the library's code: a PLT slot
//    not yet bound still points at its stub. Where none is bound yet, the loader is
//    asked as above, if the process started with uprof's GLIBC_TUNABLES.
//
// An executable cannot be dlopen'ed and a file of another architecture cannot be loaded
// on this machine: both are errors that say so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "uprof/resolve/elf/elf_file.h"
#include "uprof/util/result.h"

namespace uprof {

struct IfuncQuery {
  std::string name;       // "strlen"
  std::string version;    // "GLIBC_2.14" for memcpy@@GLIBC_2.14; "" for the default version
  uint64_t resolver = 0;  // the IFUNC symbol's value: the link-time address of its resolver
};

// For each query, the link-time address in `lib` of the implementation the loader
// selects on this machine. Errors name the file and the symbol:
//   ifunc: ./prog: the loader cannot load it to ask which implementation 'f' selects
//   (cannot dynamically load position-independent executable)
Result<std::vector<uint64_t>> ask_loader(const ElfFile& lib, const std::vector<IfuncQuery>& queries);

// For each query, the link-time address in `lib` of the implementation process `pid`
// bound it to; nullopt where no slot of the process says (no reference bound yet).
// An error when `lib` is not mapped by the process or its memory cannot be read.
Result<std::vector<std::optional<uint64_t>>> process_choices(int pid, const ElfFile& lib,
                                                             const std::vector<IfuncQuery>& queries);

// Whether process `pid`'s loader selects as a fresh one of uprof's would, for an IFUNC
// it has not bound yet: the CPU is the same; what can differ is GLIBC_TUNABLES
// (glibc.cpu.hwcaps=-AVX2,...), which its loader read when it started. An error says
// what differs:
//   process 1234 started with GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2, uprof without
Status same_selection_as_here(int pid);

}  // namespace uprof
