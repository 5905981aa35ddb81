#include "uprof/record/call_stacks.h"

#include <algorithm>
#include <charconv>
#include <map>


namespace uprof {
namespace {

// Where a call starts (its stack is taken there) and where it ends.
bool starts_call(RowRole r) { return r == RowRole::Entry || r == RowRole::UsdtStart; }
bool ends_call(RowRole r) { return r == RowRole::Return || r == RowRole::Exit || r == RowRole::UsdtDone; }

// The registers an unwinding may start from: every integer register DWARF numbers (a
// CFA rule may name any of them), the stack pointer and the pc. For the perf engine's
// PERF_SAMPLE_REGS_USER; the BPF engine copies the whole struct pt_regs.
uint64_t unwind_regs_mask(const ArchInfo& a) {
  uint64_t mask = (uint64_t{1} << a.sp_reg) | (uint64_t{1} << a.ip_reg);
  for (const RegInfo& r : a.regs)
    if (r.dwarf_number >= 0 && r.dwarf_number < a.fp_dwarf_regs.first && r.perf_index < 64)
      mask |= uint64_t{1} << r.perf_index;
  return mask;
}

}  // namespace

std::vector<std::string> plan_call_stacks(std::vector<ProbeInfo>& probes, CapturePlan& capture,
                                          const CallGraphPlan& call_graph) {
  std::vector<std::string> notes;
  if (!call_graph.on) return notes;
  capture.call_graph = call_graph;
  // Per report row: whether it has a probe where its calls start, and one where they end.
  struct Ends {
    bool start = false, end = false, trampoline = false;
  };
  std::map<std::string, Ends> rows;
  for (const ProbeInfo& p : probes) {
    Ends& e = rows[p.row.empty() ? p.function : p.row];
    e.start |= starts_call(p.role);
    e.end |= ends_call(p.role);
    e.trampoline |= p.kind == ProbeKind::Return;
  }
  std::vector<std::string> untimed;  // --stack-min: rows whose calls cannot be timed in the kernel
  for (std::size_t i = 0; i < probes.size() && i < capture.probes.size(); i++) {
    ProbeInfo& p = probes[i];
    const Ends& e = rows[p.row.empty() ? p.function : p.row];
    StackCapture how = StackCapture::None;
    if (call_graph.stack_min_ns == 0) {
      // The entry takes the stack; an end only when its call has no entry probe.
      how = !ends_call(p.role) || !e.start ? StackCapture::Always : StackCapture::None;
    } else if (e.start && e.end) {
      how = starts_call(p.role) ? StackCapture::EntryTime : ends_call(p.role) ? StackCapture::IfLong : StackCapture::None;
    } else if (!ends_call(p.role)) {
      const std::string name = p.row.empty() ? p.function : p.row;
      if (untimed.empty() || untimed.back() != name) untimed.push_back(name);
    }
    capture.probes[i].stack = how;
    capture.probes[i].return_probed = p.kind == ProbeKind::Entry && starts_call(p.role) && e.trampoline;
    if (how == StackCapture::Always || how == StackCapture::IfLong) {
      ProbeReads& reads = capture.probes[i].reads;
      reads.regs_mask |= unwind_regs_mask(arch_info(capture.arch));
      reads.stack_bytes = std::max(reads.stack_bytes, call_graph.stack_bytes);
    }
    p.stack = how == StackCapture::Always || how == StackCapture::IfLong;
  }
  if (!untimed.empty()) {
    std::string names;
    for (std::size_t i = 0; i < untimed.size() && i < 3; i++) names += (i ? ", " : "") + untimed[i];
    if (untimed.size() > 3) names += ", ...";
    notes.push_back("--stack-min: no call stacks for " + std::to_string(untimed.size()) + " probe" +
                    (untimed.size() > 1 ? "s" : "") + " without both an entry and a return (" + names +
                    "): their calls have no duration to compare");
  }
  return notes;
}

Result<CallGraphPlan> parse_call_graph(const std::string& text) {
  CallGraphPlan plan{.on = true};
  const auto comma = text.find(',');
  const std::string method = text.substr(0, comma);
  if (method == "fp") {
    plan.method = CallGraphMethod::FramePointer;
  } else if (method != "dwarf") {
    return err("--call-graph is dwarf[,SIZE] or fp, not '", text, "'");
  }
  if (comma != std::string::npos) {
    const std::string size = text.substr(comma + 1);
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), n);
    if (ec != std::errc() || end != size.data() + size.size() || n == 0 || n % 8 != 0 || n > kMaxCallStackBytes)
      return err("--call-graph ", method, ",SIZE: SIZE is the user stack bytes to copy per stack, a multiple of 8 from 8 to ",
                 kMaxCallStackBytes, ", not '", size, "'");
    plan.stack_bytes = static_cast<uint32_t>(n);
  }
  return plan;
}

}  // namespace uprof
