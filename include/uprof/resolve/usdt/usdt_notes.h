// USDT (SystemTap SDT) probes: the .note.stapsdt notes of an ELF file, and where a
// uprobe on each goes.
//
// A crash course. STAP_PROBE2(python, line, ...) in a C file assembles to a `nop` at
// the probe site and, in the non-allocated section .note.stapsdt, one ELF note:
//
//   namesz 8, descsz, type 3 (NT_STAPSDT), "stapsdt\0", then the desc:
//     u64 pc         the nop's link-time address
//     u64 base       the link-time address of the section .stapsdt.base
//     u64 semaphore  the address of a u16 counter, 0 when the probe has none
//     "python\0" "line\0" "8@%r14 8@%rax -4@%ebp\0"   (provider, name, arguments)
//
// `readelf -n /usr/bin/python3.11` prints it as
//
//   stapsdt  0x0000003a  NT_STAPSDT (SystemTap probe descriptors)
//     Provider: python
//     Name: line
//     Location: 0x000000000043423c, Base: 0x00000000008cc5a0, Semaphore: 0x0000000000a8426c
//     Arguments: 8@%r14 8@%rax -4@%ebp
//
// Prelink (or any tool that moves a file's sections after the link) changes
// .stapsdt.base's address but not the notes, which are not allocated: the
// difference between the section's address and the note's `base` is how far
// everything moved, and pc and semaphore move by it too. A uprobe is placed by
// file offset, through the PT_LOAD headers (offset.h); so is the semaphore
// (`ref_ctr_offset` of the uprobe PMU): the kernel increments the u16 there in
// each process that maps the file while the probe is attached, and code guarded
// by `if (PYTHON_LINE_ENABLED())` then runs.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "uprof/resolve/elf/elf_file.h"
#include "uprof/resolve/elf/offset.h"
#include "uprof/util/result.h"

namespace uprof {

// One note as the file records it.
struct UsdtNote {
  std::string provider{};
  std::string name{};
  uint64_t pc = 0;           // link-time address of the probe's nop
  uint64_t base = 0;         // link-time address of .stapsdt.base
  uint64_t semaphore = 0;    // link-time address of the semaphore, 0 when none
  std::string args{};        // "8@%r14 8@%rax -4@%ebp", "" when none
  uint64_t note_offset = 0;  // file offset of the note's header (for messages)
};

// A note with what a uprobe needs.
struct UsdtProbe {
  UsdtNote note{};
  uint64_t vaddr = 0;                         // pc, moved as .stapsdt.base moved
  uint64_t file_offset = 0;                   // of vaddr, through PT_LOAD
  uint64_t semaphore_vaddr = 0;               // 0 when none
  std::optional<uint64_t> semaphore_offset{}; // the uprobe's ref_ctr_offset; nullopt when none
};

// The stapsdt notes (owner "stapsdt", type 3) among the notes of a note section's
// bytes, in file order; notes of other owners or types are skipped. Little-endian,
// 64-bit. `section_offset` is the section's file offset, for the notes'
// note_offset and the messages:
//   "usdt: ./prog: note at file offset 0x3278: desc of 20 bytes is too short for 3 addresses"
Result<std::vector<UsdtNote>> parse_stapsdt_notes(std::span<const std::byte> section, uint64_t section_offset,
                                                  const std::string& path);

// Where each note's probe and semaphore are: `stapsdt_base` is the address of the
// file's .stapsdt.base section (nullopt when it has none: no adjustment). A pc or
// semaphore no PT_LOAD maps from the file is an error naming the note.
Result<std::vector<UsdtProbe>> locate_usdt_probes(const std::vector<UsdtNote>& notes,
                                                  std::optional<uint64_t> stapsdt_base,
                                                  std::span<const LoadSegment> loads, const std::string& path);

// Both, on an open file: its .note.stapsdt section(s) and .stapsdt.base. A file with
// no notes gives an empty list.
Result<std::vector<UsdtProbe>> read_usdt_probes(const ElfFile& elf);

}  // namespace uprof
