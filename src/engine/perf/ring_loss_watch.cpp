#include "uprof/engine/perf/ring_loss_watch.h"

#include <algorithm>

namespace uprof {

RingLossWatch::RingLossWatch(std::vector<std::size_t> ring_bytes, uint64_t max_hold_ns) : max_hold_ns_(max_hold_ns) {
  for (std::size_t size : ring_bytes) rings_.push_back(Ring{.size = size});
}

void RingLossWatch::on_record(std::size_t ring, std::size_t bytes, std::optional<uint64_t> time) {
  if (ring >= rings_.size()) return;
  Ring& r = rings_[ring];
  r.read += bytes;
  r.held_since.reset();  // the ring wrote again: a LOST it owed came first
  if (time) r.last_time = std::max(r.last_time, *time);
}

uint64_t RingLossWatch::on_lost_record(std::size_t ring, uint64_t lost) {
  if (ring >= rings_.size()) {
    said_ += lost;
    return lost;
  }
  Ring& r = rings_[ring];
  if (r.owed) {
    // The LOST of the drops a settled Lost event said: the first after the settling (the
    // ring had room again, so its next write carries them). What it says beyond them
    // (side band records, drops the counters did not see yet) is counted at the end.
    r.reported += lost > r.owed ? lost - r.owed : 0;
    r.owed = 0;
    return 0;
  }
  r.reported += lost;
  said_ += lost;
  return lost;
}

void RingLossWatch::pass_ended(uint64_t now) {
  for (Ring& r : rings_) {
    // The kernel saw the fill of this read and of what it wrote while the read went on
    // (the tail moves when the read ends), which the next read takes.
    const std::size_t fill = r.prev_read + r.read;
    if (fill * 4 > r.size) {
      r.held_since = now;
      r.held_fill = fill;
    }
    r.prev_read = r.read;
    r.read = 0;
  }
}

std::vector<std::size_t> RingLossWatch::overdue(uint64_t now) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < rings_.size(); ++i)
    if (rings_[i].held_since && now - *rings_[i].held_since >= max_hold_ns_) out.push_back(i);
  return out;
}

std::optional<Event> RingLossWatch::settle(std::size_t ring, std::optional<uint64_t> dropped, uint64_t now) {
  if (ring >= rings_.size()) return std::nullopt;
  Ring& r = rings_[ring];
  r.held_since.reset();
  const uint64_t unsaid = dropped && *dropped > r.reported ? *dropped - r.reported : 0;
  if (!unsaid && r.held_fill * 2 <= r.size) return std::nullopt;
  Event e;
  e.kind = EventKind::Lost;
  e.probe = UINT32_MAX;
  e.lost = unsaid;  // 0: it may have dropped, the counters cannot tell
  e.time = r.last_time;
  e.lost_until = std::max(now, r.last_time);
  r.reported += unsaid;
  r.owed += unsaid;
  said_ += unsaid;
  return e;
}

uint64_t RingLossWatch::horizon() const {
  uint64_t h = UINT64_MAX;
  for (const Ring& r : rings_)
    if (r.held_since) h = std::min(h, r.last_time);
  return h;
}

}  // namespace uprof
