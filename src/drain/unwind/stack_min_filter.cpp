#include "uprof/drain/unwind/stack_min_filter.h"

namespace uprof {

bool StackMinFilter::drop_stack(const Event& e) {
  if (e.kind == EventKind::Exit) {
    entries_.erase(e.tid);
    return false;
  }
  if (e.kind != EventKind::Sample || e.probe >= plan_.probes.size()) return false;
  const StackCapture how = plan_.probes[e.probe].stack;
  if (how == StackCapture::EntryTime) {
    entries_[e.tid].push_back(e.time);
    return false;
  }
  if (how != StackCapture::IfLong) return false;
  auto it = entries_.find(e.tid);
  // A return whose entry came before the recording: no duration, no stack (as in BPF).
  bool keep = false;
  if (it != entries_.end() && !it->second.empty()) {
    keep = e.time - it->second.back() >= plan_.call_graph.stack_min_ns;
    it->second.pop_back();
  }
  if (keep || e.stack.empty()) return false;
  dropped_++;
  return true;
}

}  // namespace uprof
