#include "uprof/engine/bpf/bpf_capture_table.h"

#include <algorithm>
#include <string>

#include "uprof/util/hex.h"

namespace uprof {
namespace {

static_assert(static_cast<uint32_t>(StackCapture::Always) == UPROF_BPF_STACK_ALWAYS &&
              static_cast<uint32_t>(StackCapture::EntryTime) == UPROF_BPF_STACK_ENTRY &&
              static_cast<uint32_t>(StackCapture::IfLong) == UPROF_BPF_STACK_IF_LONG && kMaxCallStackBytes == UPROF_BPF_STACK_MAX,
              "record -g's modes as the BPF program reads them");

std::string where(const ProbeCapture& probe) { return probe.path + " @ " + hex(probe.file_offset); }

struct SlotBuilder {
  uprof_bpf_slot slot{};
  unsigned n = 0;
  void add(uint8_t op, uint8_t size, uint16_t reg_off, int32_t imm) {
    slot.steps[n++] = uprof_bpf_step{.op = op, .size = size, .reg_off = reg_off, .imm = imm};
  }
};

Result<uint16_t> register_offset(const ProbeCapture& probe, Arch arch, const ValueSpec& v, unsigned reg) {
  if (auto off = pt_regs_offset(arch, reg)) return *off;
  const RegInfo* info = find_reg_by_perf_index(arch_info(arch), reg);
  return err(where(probe), ": value '", v.name, "': register ",
             info ? std::string(info->name) : std::to_string(reg), " cannot be read by the BPF engine (use --engine perf)");
}

}  // namespace

Result<uprof_bpf_probe> bpf_capture_entry(const ProbeCapture& probe, Arch arch) {
  if (probe.values.size() > UPROF_BPF_MAX_SLOTS)
    return err(where(probe), ": ", probe.values.size(),
               " value slots, more than the ", UPROF_BPF_MAX_SLOTS, " an event holds");
  uprof_bpf_probe entry{};
  entry.probe = probe.probe;
  entry.nslots = static_cast<uint32_t>(probe.values.size());
  entry.stack = static_cast<uint32_t>(probe.stack);  // StackCapture's values are uprof_bpf_stack_mode's
  static_assert(static_cast<uint32_t>(OffCpuRole::Enter) == UPROF_BPF_OFFCPU_ENTER &&
                static_cast<uint32_t>(OffCpuRole::Leave) == UPROF_BPF_OFFCPU_LEAVE);
  entry.offcpu = static_cast<uint32_t>(probe.offcpu);
  const uint16_t sp = arch_info(arch).sp_reg;
  uint32_t text = 0;  // string bytes a hit may write
  for (std::size_t i = 0; i < probe.values.size(); i++) {
    const ValueSpec& v = probe.values[i];
    SlotBuilder b;
    switch (v.source) {
      case ValueSource::Constant:
      case ValueSource::Unavailable:
        break;  // nothing to read
      case ValueSource::Comm:
        text += 16;
        if (text > UPROF_BPF_TEXT_BYTES)
          return err(where(probe), ": its strings take more than ", UPROF_BPF_TEXT_BYTES, " bytes a hit (lower --string-size)");
        b.add(UPROF_BPF_OP_COMM, 0, 16, 0);
        entry.text = 1;
        break;
      case ValueSource::Register:
      case ValueSource::ReturnValue: {
        UPROF_ASSIGN(uint16_t off, register_offset(probe, arch, v, v.reg));
        b.add(UPROF_BPF_OP_REG, 8, off, 0);
        break;
      }
      case ValueSource::Stack: {
        UPROF_ASSIGN(uint16_t off, register_offset(probe, arch, v, sp));
        b.add(UPROF_BPF_OP_REG, 8, off, 0);
        b.add(UPROF_BPF_OP_READ, v.deref ? 8 : v.size, 0, v.stack_offset);
        break;
      }
    }
    if (b.n > 0 && b.n + v.hops.size() + (v.deref ? 1 : 0) > UPROF_BPF_MAX_STEPS)
      return err(where(probe), ": value '", v.name, "': more memory reads than the BPF engine's ", UPROF_BPF_MAX_STEPS,
                 " steps");
    // Pointers followed, then the value behind the last address (or the string there).
    if (b.n > 0)
      for (int32_t hop : v.hops) b.add(UPROF_BPF_OP_READ, 8, 0, hop);
    if (v.deref && b.n > 0) {
      if (v.is_string()) {
        const uint32_t bytes = std::min<uint32_t>(v.string_max, UPROF_BPF_MAX_STRING - 2) + 2;
        text += bytes;
        if (text > UPROF_BPF_TEXT_BYTES)
          return err(where(probe), ": its strings take more than ", UPROF_BPF_TEXT_BYTES,
                     " bytes a hit (lower --string-size)");
        b.add(UPROF_BPF_OP_STR, 0, static_cast<uint16_t>(bytes), v.deref_offset);
        entry.text = 1;
      } else {
        b.add(UPROF_BPF_OP_READ, v.size, 0, v.deref_offset);
      }
    }
    entry.slots[i] = b.slot;
    // Memory behind an address may be in a page not faulted in yet; the registers and
    // the stack slots at the stack pointer are there.
    if (b.n > 0 && fetched_from_memory(v)) entry.faults = 1;
  }
  return entry;
}

Result<std::vector<uprof_bpf_probe>> bpf_capture_table(const CapturePlan& plan) {
  std::vector<uprof_bpf_probe> table;
  table.reserve(plan.probes.size());
  for (const auto& p : plan.probes) {
    UPROF_ASSIGN(uprof_bpf_probe e, bpf_capture_entry(p, plan.arch));
    table.push_back(e);
  }
  return table;
}

}  // namespace uprof
