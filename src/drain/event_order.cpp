#include "uprof/drain/event_order.h"

#include <algorithm>

namespace uprof {

EventOrderer::EventOrderer(std::size_t budget) : budget_(budget), pool_(std::make_unique<ChunkPool>()) {}

void EventOrderer::push(std::size_t lane, const Event& e) {
  while (lane >= queues_.size()) queues_.emplace_back(*pool_);
  queues_[lane].push(e);
  newest_pushed_ = std::max(newest_pushed_, e.time);
}

void EventOrderer::pass_started(uint64_t now) {
  prev_horizon_ = cur_horizon_;
  cur_horizon_ = now;
}

void EventOrderer::pass_cut() { cur_horizon_ = std::min(cur_horizon_, newest_pushed_); }

std::size_t EventOrderer::pending() const {
  std::size_t n = 0;
  for (const auto& q : queues_) n += q.size();
  return n;
}

Status EventOrderer::emit_before(uint64_t limit, const Sink& sink) {
  // A min-heap of the lanes whose oldest event is due, by (time, lane): equal times go
  // in lane order.
  auto later = [](const std::pair<uint64_t, uint32_t>& a, const std::pair<uint64_t, uint32_t>& b) { return a > b; };
  heap_.clear();
  for (uint32_t i = 0; i < queues_.size(); i++)
    if (!queues_[i].empty() && queues_[i].front_time() < limit) heap_.emplace_back(queues_[i].front_time(), i);
  std::make_heap(heap_.begin(), heap_.end(), later);
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const uint32_t lane = heap_.back().second;
    heap_.pop_back();
    EventQueue& q = queues_[lane];
    // Take this lane's events while they stay the oldest: runs from one lane are
    // common (one busy CPU), and they need no heap operation.
    for (;;) {
      q.pop(out_);
      if (out_.time < last_emitted_) late_++;
      else last_emitted_ = out_.time;
      UPROF_TRY(sink(out_));
      if (q.empty()) break;
      const uint64_t t = q.front_time();
      if (t >= limit) break;
      if (!heap_.empty() && std::make_pair(t, lane) > heap_.front()) {
        heap_.emplace_back(t, lane);
        std::push_heap(heap_.begin(), heap_.end(), later);
        break;
      }
    }
  }
  return ok();
}

Status EventOrderer::pass_ended(const Sink& sink, uint64_t hold) {
  return emit_before(std::min(prev_horizon_, hold), sink);
}

Status EventOrderer::flush_all(const Sink& sink) { return emit_before(UINT64_MAX, sink); }

}  // namespace uprof
