// The dynamic relocations of an ELF file that make the loader write a function's
// address into a pointer slot (.rela.dyn and .rela.plt, through the section headers).
// After loading, those slots hold what the process's loader chose, which for an IFUNC
// is the implementation its resolver selected. From `readelf -rW libc.so.6` (Debian 12):
//   00000000001d3080  0000000000000025 R_X86_64_IRELATIVE    9f1c0
// libc's own slot for strlen: the loader calls the resolver at 0x9f1c0 (strlen's IFUNC
// symbol value) and writes what it returns at load bias + 0x1d3080, also under lazy
// binding. A program's `R_X86_64_JUMP_SLOT strlen` holds the same once bound.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "uprof/resolve/elf/elf_file.h"

namespace uprof {

struct PointerReloc {
  enum class Kind : uint8_t { Irelative, GlobDat, JumpSlot, Abs64 };
  Kind kind = Kind::GlobDat;
  uint64_t slot = 0;       // r_offset: the link-time address of the slot
  std::string symbol;      // the symbol it names ("" for IRELATIVE)
  int64_t addend = 0;      // IRELATIVE: the resolver's address
};

// Every such relocation of `elf`, in section order. A file without them gives none.
std::vector<PointerReloc> pointer_relocs(const ElfFile& elf);

}  // namespace uprof
