// Which file a library name means for a given program, decided the way the
// dynamic loader decides it. For `./uselib` (DT_NEEDED libfx.so.1 and libc.so.6,
// DT_RUNPATH $ORIGIN) the probe spec `libfx:fx_lib_add` must reach
// ./libfx.so.1 next to the program, and `libc:malloc` the x86-64 libc.so.6 that
// /etc/ld.so.cache lists, never the i386 one in /lib32 or an aarch64 one.
//
// Nothing here runs the program or reads the environment: LD_LIBRARY_PATH and
// LD_PRELOAD belong to the run being profiled, not to uprof's own.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/resolve/elf/elf_file.h"
#include "uprof/util/result.h"

namespace uprof {

struct LibrarySearchOptions {
  std::string ld_so_cache = "/etc/ld.so.cache";
  // The loader's built-in directories, tried last. Empty means
  // default_library_dirs(target arch). For an arm64 program on an x86-64 host
  // pass the cross sysroot, e.g. {"/usr/aarch64-linux-gnu/lib"}.
  std::vector<std::string> default_dirs;
};

// "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
// "/lib", "/usr/lib" (with "aarch64-linux-gnu" for Arm64): Debian multiarch
// first, then the lib64 layout of Fedora and friends, then the plain dirs.
std::vector<std::string> default_library_dirs(Arch arch);

struct NeededLibrary {
  std::string soname;  // the DT_NEEDED string, "libc.so.6"
  std::string path;    // the file the loader would map, "" when none was found
};

// Every library `target` needs, transitively, in the loader's breadth-first
// order, each resolved through: DT_RPATH of the requesting object and of the
// objects that loaded it (only while they have no DT_RUNPATH), the requesting
// object's DT_RUNPATH, ld.so.cache entries of the target's architecture, the
// default dirs. $ORIGIN and ${ORIGIN} become the directory of the object that
// carries the tag; elements with other tokens ($LIB, $PLATFORM) are skipped.
// Files of another architecture are passed over, as the loader passes them.
std::vector<NeededLibrary> needed_libraries(const ElfFile& target,
                                            const LibrarySearchOptions& opts = {});

// What a spec's library part names for `target`:
//   a path (contains '/')   -> returned as given when it exists;
//   "libc.so.6"             -> that soname;
//   "libc", "c", "libc.so"  -> the soname "libc.so" or "libc.so.<anything>".
// The target's needed libraries are searched first, then ld.so.cache entries of
// its architecture; an exact soname beats a prefix match. One-line errors:
//   spec: library 'libfoo' not found for ./uselib (looked in its DT_NEEDED libraries and /etc/ld.so.cache)
//   spec: library 'libfoo' is ambiguous for ./uselib: libfoo.so.1 (/usr/lib/libfoo.so.1), libfoo.so.2 (...)
Result<std::string> find_library(const ElfFile& target, std::string_view name,
                                 const LibrarySearchOptions& opts = {});

// What a library name means with no program to ask (`uprof probe libc:malloc`,
// `record -a`, a workload that is a script): ld.so.cache's entries of `arch`, then an
// exact soname in the default directories. Errors as find_library's, without a program.
Result<std::string> find_system_library(std::string_view name, Arch arch, const LibrarySearchOptions& opts = {});

// True when the soname `soname` is what the short name `name` means (the
// matching rule of find_library, exposed for listing candidates).
bool library_name_matches(std::string_view soname, std::string_view name);

}  // namespace uprof
