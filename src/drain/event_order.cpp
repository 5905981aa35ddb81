#include "uprof/drain/event_order.h"

#include <algorithm>

namespace uprof {

void EventOrderer::push(std::size_t ring, Event e) {
  if (ring >= queues_.size()) queues_.resize(ring + 1);
  queues_[ring].push_back(std::move(e));
}

void EventOrderer::pass_started(uint64_t now) {
  prev_pass_start_ = cur_pass_start_;
  cur_pass_start_ = now;
}

std::size_t EventOrderer::pending() const {
  std::size_t n = 0;
  for (const auto& q : queues_) n += q.size();
  return n;
}

Status EventOrderer::emit_before(uint64_t limit, const Sink& sink) {
  for (;;) {
    // The oldest head among the queues; equal times go in ring order.
    std::deque<Event>* best = nullptr;
    for (auto& q : queues_)
      if (!q.empty() && q.front().time < limit && (!best || q.front().time < best->front().time)) best = &q;
    if (!best) return ok();
    const Event& e = best->front();
    if (e.time < last_emitted_) late_++;
    else last_emitted_ = e.time;
    UPROF_TRY(sink(e));
    best->pop_front();
  }
}

Status EventOrderer::pass_ended(const Sink& sink, uint64_t hold) {
  return emit_before(std::min(prev_pass_start_, hold), sink);
}

Status EventOrderer::flush_all(const Sink& sink) { return emit_before(UINT64_MAX, sink); }

}  // namespace uprof
