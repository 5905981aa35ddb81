// Where a function's entry probe goes: at the symbol, or a few instructions in, where
// the kernel emulates or optimizes the instruction instead of single-stepping it
// (insn_class.h). `endbr64; push %rbp` is probed at the push: the same arguments and
// stack pointer, at a fifth of the cost.
//
// The site moves forward from the symbol past instructions ("skipped") only when
//   - the symbol's instruction is single-stepped, or refused (insn_class.h: then the
//     site is the first instruction the kernel probes, whatever its class);
//   - no skipped instruction changes control flow, writes the stack pointer or
//     memory, or writes a register the probe reads (so every value the probe captures,
//     bound at the entry, reads the same bits at the new site; on arm64 with a return
//     probe the link register x30 is read too: paciasp blocks the move). Past a refused
//     instruction, a memory write only blocks a probe that reads memory (a string, a
//     stack value): `lock decl (%rdi); jne` is probed at the jne;
//   - no skipped instruction is one a probe must stay before (arm64's load-exclusive: a
//     breakpoint before its store-exclusive makes the store fail every time);
//   - nothing can jump into the skipped stretch: no direct branch or call of the file
//     targets an offset in (start, site], and neither does an entry of a jump table of
//     the function; a function with an indirect jump whose table cannot be read stays;
//   - the new site's instruction is emulated or optimized (past a refused one: any the
//     kernel probes but a return, where the calls would take no time), within
//     kMaxSkipped instructions and kWindowBytes bytes of the symbol.
// Pure: the code, the branch targets and the jump-table reader come in as data.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/resolve/insn/insn_class.h"
#include "uprof/resolve/insn/insn_decode.h"
#include "uprof/util/result.h"

namespace uprof {

inline constexpr std::size_t kMaxSkipped = 4;
inline constexpr std::size_t kWindowBytes = 24;

struct PlacementInput {
  uint64_t function_vaddr = 0;
  uint64_t function_file_offset = 0;
  std::span<const uint8_t> code;  // the whole function's bytes, from its symbol
  uint64_t regs_read = 0;         // perf-index bits of the registers the entry values read
  bool reads_memory = false;      // an entry value is read from memory (a string, a stack slot)
  bool has_return_probe = false;
  // Whether any direct branch or call of the file targets an address in (lo, hi].
  std::function<bool(uint64_t lo, uint64_t hi)> branch_targets_in;
  // Reads `n` bytes at a link-time address (for jump tables); nullopt when unmapped.
  std::function<std::optional<std::vector<uint8_t>>(uint64_t vaddr, std::size_t n)> read;
};

struct Placement {
  uint64_t offset = 0;       // the site, from the function's start (0: at the symbol)
  InsnInfo at_symbol;        // the symbol's instruction
  InsnInfo at_site;          // the site's (the same when not moved)
  std::string skipped;       // "endbr64", "endbr64; test %rdi, %rdi"
  std::string kept_because;  // when the symbol's instruction is slow and the site stays: why
  bool moved() const { return offset != 0; }
};

Placement place_entry(const InsnDecoder& decoder, const PlacementInput& in);

// "endbr64 (single-stepped) -> +0x4": what the site moved past, for the line before a
// recording and `uprof probe`; "" when it did not move.
std::string describe_move(const Placement& p);

// The instruction boundaries of a function from its symbol, up to `upto` bytes in
// (x86-64 decodes them; arm64 has one every 4 bytes). Refuses `offset` when it is not
// one, naming the instruction it falls in and the nearest boundaries.
Status check_boundary(const InsnDecoder& decoder, std::span<const uint8_t> code, uint64_t offset,
                      const std::string& function);

}  // namespace uprof
