// `uprof bench` checks the kernel-behaviour table (resolve/insn/insn_class.h: which first
// instructions this kernel single-steps, emulates or optimizes, restated from the
// kernel's source) against what it measured: an emulated hit must cost clearly less
// than a single-stepped one, and an optimized one no more than an emulated one. A
// kernel that single-steps what the table says it emulates shows up here, and then
// probe placement and --compensate work from a wrong table. Pure.
#pragma once

#include <string>

#include "uprof/calibrate/probe_cost.h"

namespace uprof {

// An emulated entry hit at or above this fraction of a single-stepped one means the
// kernel does not emulate it (measured here: 0.07-0.3 on Linux 6.18 x86-64, 0.4-0.6
// under qemu's emulated arm64 with Linux 6.1).
inline constexpr double kEmulatedAtMost = 0.8;
// An optimized entry hit above this multiple of an emulated one: not optimized.
inline constexpr double kOptimizedAtMost = 1.3;

struct TableCheck {
  bool consistent = true;
  std::string line;  // "kernel table: as measured (bpf: emulated 0.26x single-stepped, ...)" or the warning
};

TableCheck check_kernel_table(const ProbeCostTable& t);

}  // namespace uprof
