// Which perf rings may still owe a LOST record, and so how far the merged stream may go
// out (drain/event_order.h) without a Lost event arriving behind events already written.
//
// The kernel writes PERF_RECORD_LOST just before the first record that fits again, and
// its Lost event is dated at the ring's record before the drops (perf_records.h). That
// record may have been read passes earlier: by then the orderer has let other rings'
// later events go, and the pairer would pair across the gap before hearing of it
// (measured with a one-page ring and 4 busy threads: ~20 of ~110 losses late, by 10 ms
// median, 97 ms at most). So a ring that may have dropped holds the stream at its last
// record's time until its next record is read (the LOST, if there were drops):
//
//   pass p reads ring 1: 1.2 KiB of a 4 KiB ring (> a quarter: it may have filled)
//        -> hold at ring 1's last record, t=500; other rings' events >= 500 wait
//   pass p+1 reads ring 1: LOST (Lost event at 500, gap to its time), then samples
//        -> released; everything before the new horizon goes, the Lost in order
//
// A ring can only drop once it is full, and its fill only grows until a read moves its
// tail: two reads in a row (what the first took, and what was written while it went on)
// of at most a quarter of it (the wakeup watermark) mean nothing was dropped. A ring still held after `max_hold_ns` (its CPU went quiet, and
// the LOST it may owe waits for a write that may not come) is settled, so that memory
// stays bounded by what `max_hold_ns` of events take: the caller reads what that CPU's
// events dropped (PERF_FORMAT_LOST), and what no LOST record said yet becomes a Lost
// event now, over the gap; the LOST record that comes later is absorbed. The counters
// have been seen to fall short of what that LOST record then said (492 where it said
// 494: the side band's task records are not in them), and say nothing before Linux 6.0:
// a ring that may have been more than half full and is settled with none is given a
// Lost of unknown count all the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "uprof/model/recording.h"

namespace uprof {

class RingLossWatch {
 public:
  explicit RingLossWatch(std::vector<std::size_t> ring_bytes, uint64_t max_hold_ns = 50'000'000);

  // A record of `bytes` read from `ring`, after its event (if any, of time `time`) was
  // pushed to the orderer.
  void on_record(std::size_t ring, std::size_t bytes, std::optional<uint64_t> time);
  // A LOST record of `ring` said `lost`: how many to put in its Lost event (0: the
  // drops it says were settled already; the event is absorbed).
  uint64_t on_lost_record(std::size_t ring, uint64_t lost);
  // At the end of a pass, at `now` (CLOCK_MONOTONIC): rings that may have been filled
  // past a quarter are held.
  void pass_ended(uint64_t now);
  // Rings held longer than max_hold_ns: settle each.
  std::vector<std::size_t> overdue(uint64_t now) const;
  // Releases `ring`; `dropped`: what the kernel says its CPU's events dropped so far
  // (nullopt: it cannot say). The Lost event to push on the ring's lane now, if any.
  std::optional<Event> settle(std::size_t ring, std::optional<uint64_t> dropped, uint64_t now);
  // The orderer may emit events before this (UINT64_MAX: no ring holds it).
  uint64_t horizon() const;
  // The drops the Lost events it let through or made say, in all.
  uint64_t said() const { return said_; }

 private:
  struct Ring {
    std::size_t size = 0;
    std::size_t read = 0;                  // bytes read in this pass
    std::size_t prev_read = 0;             // and in the one before
    std::size_t held_fill = 0;             // the fill it may have reached, when it was held
    uint64_t last_time = 0;                // of its last record with a time
    std::optional<uint64_t> held_since{};  // held at last_time since then
    uint64_t reported = 0;                 // drops said for it: LOST records, settled Lost events
    uint64_t owed = 0;                     // settled drops whose LOST record is still to come
  };
  std::vector<Ring> rings_;
  uint64_t max_hold_ns_;
  uint64_t said_ = 0;
};

}  // namespace uprof
