// Virtual address <-> file offset, from the PT_LOAD program headers. One formula,
// used everywhere: offset = p_offset + (vaddr - p_vaddr), for the PT_LOAD whose
// file-backed range [p_vaddr, p_vaddr + p_filesz) holds the address.
//
// Example (aarch64, non-PIE, 64 KiB pages):
//   LOAD 0x000000 0x0000000000400000 ... 0x0009bc R E
//   LOAD 0x00fd88 0x000000000041fd88 ... 0x000288 RW
//   demo_add at 0x4007e4 -> 0x0 + (0x4007e4 - 0x400000) = 0x7e4
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace uprof {

struct LoadSegment {
  uint64_t vaddr = 0;
  uint64_t memsz = 0;
  uint64_t offset = 0;
  uint64_t filesz = 0;
  bool executable = false;  // PF_X
};

// The file offset of `vaddr`, or nullopt when no PT_LOAD maps it from the file
// (an address in .bss, or outside every segment).
std::optional<uint64_t> vaddr_to_offset(std::span<const LoadSegment> loads, uint64_t vaddr);

// The virtual address that file offset `off` is loaded at, or nullopt when no
// PT_LOAD covers it.
std::optional<uint64_t> offset_to_vaddr(std::span<const LoadSegment> loads, uint64_t off);

// The segment that maps `vaddr` from the file, or nullptr.
const LoadSegment* segment_for_vaddr(std::span<const LoadSegment> loads, uint64_t vaddr);

}  // namespace uprof
