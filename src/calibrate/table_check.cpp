#include "uprof/calibrate/table_check.h"

#include <cstdio>

namespace uprof {
namespace {

std::string ratio_text(double r) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2fx", r);
  return b;
}

}  // namespace

TableCheck check_kernel_table(const ProbeCostTable& t) {
  TableCheck out;
  std::string seen, wrong;
  for (std::size_t e = 0; e < kEngineKinds; e++) {
    const EngineKind engine = static_cast<EngineKind>(e);
    const ClassCost* step = t.find(engine, InsnClass::SingleStepped);
    const ClassCost* emu = t.find(engine, InsnClass::Emulated);
    const ClassCost* opt = t.find(engine, InsnClass::Optimized);
    std::string parts;
    if (step && emu && step->entry_ns > 0) {
      const double r = emu->entry_ns / step->entry_ns;
      parts += "emulated " + ratio_text(r) + " single-stepped";
      if (r >= kEmulatedAtMost)
        wrong += std::string(wrong.empty() ? "" : "; ") + std::string(to_string(engine)) + ": an emulated hit (" + emu->insn +
                 ") costs " + ratio_text(r) + " a single-stepped one (" + step->insn +
                 "): this kernel seems to single-step it";
    }
    if (emu && opt && emu->entry_ns > 0) {
      const double r = opt->entry_ns / emu->entry_ns;
      parts += std::string(parts.empty() ? "" : ", ") + "optimized " + ratio_text(r) + " emulated";
      if (r > kOptimizedAtMost)
        wrong += std::string(wrong.empty() ? "" : "; ") + std::string(to_string(engine)) + ": an optimized hit (" + opt->insn +
                 ") costs " + ratio_text(r) + " an emulated one: this kernel seems not to optimize it";
    }
    if (!parts.empty()) seen += std::string(seen.empty() ? "" : "; ") + std::string(to_string(engine)) + ": " + parts;
  }
  if (!wrong.empty()) {
    out.consistent = false;
    out.line = "kernel table: WARNING: " + wrong + " (resolve/insn/insn_class.cpp restates Linux's uprobe decoders; "
               "placement and --compensate go by it)";
  } else if (!seen.empty()) {
    out.line = "kernel table: as measured (" + seen + " per entry hit)";
  }
  return out;
}

}  // namespace uprof
