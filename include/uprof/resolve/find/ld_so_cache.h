// A parser for /etc/ld.so.cache, the table ldconfig writes and the dynamic loader
// consults before its default directories. `ldconfig -p` prints the same entries:
//   libc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6
//   libc.so.6 (libc6) => /lib32/libc.so.6
// Both rows have the soname libc.so.6; only the flags (0x0303 vs 0x0003) tell the
// x86-64 library from the i386 one, so callers filter by ld_cache_flags_for(arch).
//
// Layouts accepted (all integers in host byte order, as ldconfig writes them):
//   "glibc-ld.so.cache1.1" header (48 bytes), nlibs entries of 24 bytes, strings;
//   "ld.so-1.7.0" header (16 bytes), nlibs entries of 12 bytes, then (8-aligned)
//     the new format above hidden in the old format's string area, or just strings.
// The parser is pure and never trusts a field: counts are checked against the
// bytes actually present before anything is allocated, and every error names the
// byte offset where the input stopped making sense.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/util/result.h"

namespace uprof {

struct LdCacheEntry {
  std::string soname;   // "libc.so.6"
  std::string path;     // "/lib/x86_64-linux-gnu/libc.so.6"
  uint32_t flags = 0;   // type in bits 0-7 (3 = ELF libc6), architecture in bits 8-15
  uint64_t hwcap = 0;   // non-zero for glibc-hwcaps subdirectory variants (new format only)
};

// The flags value ldconfig gives a 64-bit glibc library of `arch`:
// X86_64 -> 0x0303 ("libc6,x86-64"), Arm64 -> 0x0a03 ("libc6,AArch64").
uint32_t ld_cache_flags_for(Arch arch);
// True when `e` is a library the loader of an `arch` program would accept.
bool ld_cache_entry_matches(const LdCacheEntry& e, Arch arch);

// Entries in file order (ldconfig sorts them so the preferred one for a soname
// comes first). Errors read "ld.so.cache: <what> at byte offset <n>".
Result<std::vector<LdCacheEntry>> parse_ld_so_cache(std::span<const std::byte> data);
// Reads `path` and parses it; errors name the file.
Result<std::vector<LdCacheEntry>> read_ld_so_cache(const std::string& path = "/etc/ld.so.cache");

}  // namespace uprof
