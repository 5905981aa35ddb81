// A FIFO of events in compact form, for the events the drain holds between the ring and
// the data file (drain/event_order.h): each event is copied in as its fields and only
// as many values as it has (56 bytes + 8 per value, its strings after them), into
// 16 KiB chunks that are reused, so that what waits in memory is about as big as it
// was in the ring. An Event in memory is ~370 bytes whatever it holds (32 value slots,
// two strings): held as such, 8 MB of ring records became 60 MB of queue.
//
//   push(e)  -> [time lost frame | probe pid tid missing | kind n comm text | v0..vn-1 | comm | text | pad]
//   front()  -> the oldest event's time, without unpacking it
//   pop(out) -> the oldest event, unpacked into `out` (its buffers are reused)
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "uprof/model/recording.h"

namespace uprof {

// Where the queues of one orderer take their chunks from, and give them back: it knows
// how much memory the queued events hold, all queues together.
class ChunkPool {
 public:
  static constexpr std::size_t kChunkBytes = 16 << 10;

  struct Chunk {
    std::unique_ptr<std::byte[]> bytes;
    std::size_t capacity = 0;
  };
  Chunk take(std::size_t at_least);
  void give(Chunk c);
  // Bytes of the chunks in use (held by a queue).
  std::size_t in_use() const { return in_use_; }
  // The most that were ever in use at once.
  std::size_t peak() const { return peak_; }

 private:
  std::vector<Chunk> spare_;  // a few, kept to be reused
  std::size_t in_use_ = 0, peak_ = 0;
};

class EventQueue {
 public:
  explicit EventQueue(ChunkPool& pool) : pool_(&pool) {}
  EventQueue(EventQueue&&) noexcept = default;
  EventQueue& operator=(EventQueue&&) noexcept = default;
  ~EventQueue();

  void push(const Event& e);
  bool empty() const { return count_ == 0; }
  std::size_t size() const { return count_; }
  // The oldest event's time (the queue is not empty).
  uint64_t front_time() const;
  // Removes the oldest event into `out`.
  void pop(Event& out);

 private:
  struct Held {
    ChunkPool::Chunk chunk;
    std::size_t read = 0, write = 0;
  };
  ChunkPool* pool_;
  std::deque<Held> chunks_;
  std::size_t count_ = 0;
};

}  // namespace uprof
