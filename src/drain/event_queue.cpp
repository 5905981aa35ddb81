#include "uprof/drain/event_queue.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace uprof {
namespace {

// The fixed part of a queued event; its values, name and text follow.
struct Packed {
  // `lost` carries a Sample's goroutine (Event::goroutine): a sample has no loss count,
  // and a queued sample stays 56 bytes + its values.
  uint64_t time, lost, lost_until, frame;
  uint32_t probe, pid, tid, missing;
  uint8_t kind, nvalues;
  uint16_t comm_len;
  uint32_t text_len;
};
static_assert(sizeof(Packed) == 56 && alignof(Packed) == 8);  // events start at multiples of 8 in a chunk
// Every field of Event is carried above: one added to Event must be added here too, or
// the drain would lose it silently between the ring and the file.
static_assert(sizeof(Event) == 8 + 8 + 8 + 8 + kMaxValues * 8 + 8 + 8 + 8 + sizeof(std::string) + 8 + 8 + sizeof(std::string),
              "Event has a new field: carry it in EventQueue's packed form (event_queue.cpp)");

constexpr std::size_t round8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

std::size_t packed_size(const Packed& p) {
  return round8(sizeof(Packed) + std::size_t{p.nvalues} * 8 + p.comm_len + p.text_len);
}

// Spare chunks kept for reuse: enough that a queue that empties and fills again in
// each pass does not go back to the allocator, few enough not to matter.
constexpr std::size_t kSpareChunks = 8;

}  // namespace

ChunkPool::Chunk ChunkPool::take(std::size_t at_least) {
  Chunk c;
  if (at_least <= kChunkBytes && !spare_.empty()) {
    c = std::move(spare_.back());
    spare_.pop_back();
  } else {
    c.capacity = std::max(at_least, kChunkBytes);
    c.bytes = std::make_unique_for_overwrite<std::byte[]>(c.capacity);
  }
  in_use_ += c.capacity;
  peak_ = std::max(peak_, in_use_);
  return c;
}

void ChunkPool::give(Chunk c) {
  in_use_ -= c.capacity;
  if (c.capacity == kChunkBytes && spare_.size() < kSpareChunks) spare_.push_back(std::move(c));
}

EventQueue::~EventQueue() {
  for (auto& h : chunks_) pool_->give(std::move(h.chunk));
}

void EventQueue::push(const Event& e) {
  const uint8_t nvalues = static_cast<uint8_t>(std::min<std::size_t>(e.nvalues, kMaxValues));
  // A thread's name is at most 15 bytes; the limit only keeps the field honest.
  const uint16_t comm_len = static_cast<uint16_t>(std::min<std::size_t>(e.comm.size(), UINT16_MAX));
  const uint32_t text_len = static_cast<uint32_t>(e.text.size());
  const std::size_t size = round8(sizeof(Packed) + std::size_t{nvalues} * 8 + comm_len + text_len);
  if (chunks_.empty() || chunks_.back().chunk.capacity - chunks_.back().write < size)
    chunks_.push_back(Held{.chunk = pool_->take(size)});
  Held& h = chunks_.back();
  std::byte* at = h.chunk.bytes.get() + h.write;
  // Built in place: a copy from the stack into the chunk stalled on its own stores.
  new (at) Packed{.time = e.time,
                  .lost = e.kind == EventKind::Sample ? e.goroutine : e.lost,
                  .lost_until = e.lost_until,
                  .frame = e.frame,
                  .probe = e.probe,
                  .pid = e.pid,
                  .tid = e.tid,
                  .missing = e.missing,
                  .kind = static_cast<uint8_t>(e.kind),
                  .nvalues = nvalues,
                  .comm_len = comm_len,
                  .text_len = text_len};
  at += sizeof(Packed);
  std::memcpy(at, e.values.data(), std::size_t{nvalues} * 8);
  at += std::size_t{nvalues} * 8;
  if (comm_len) std::memcpy(at, e.comm.data(), comm_len);
  at += comm_len;
  if (text_len) std::memcpy(at, e.text.data(), text_len);
  h.write += size;
  count_++;
}

uint64_t EventQueue::front_time() const {
  const Held& h = chunks_.front();
  return std::launder(reinterpret_cast<const Packed*>(h.chunk.bytes.get() + h.read))->time;
}

void EventQueue::pop(Event& out) {
  Held& h = chunks_.front();
  const std::byte* at = h.chunk.bytes.get() + h.read;
  const Packed& p = *std::launder(reinterpret_cast<const Packed*>(at));
  at += sizeof p;
  out.kind = static_cast<EventKind>(p.kind);
  out.probe = p.probe;
  out.pid = p.pid;
  out.tid = p.tid;
  out.time = p.time;
  out.missing = p.missing;
  const bool sample = p.kind == static_cast<uint8_t>(EventKind::Sample);
  out.lost = sample ? 0 : p.lost;
  out.goroutine = sample ? p.lost : 0;
  out.lost_until = p.lost_until;
  out.frame = p.frame;
  // The slots past the event's own stay 0, as in a new Event: `out` is reused.
  if (p.nvalues < out.nvalues) std::fill(out.values.begin() + p.nvalues, out.values.begin() + out.nvalues, 0);
  out.nvalues = p.nvalues;
  std::memcpy(out.values.data(), at, std::size_t{p.nvalues} * 8);
  at += std::size_t{p.nvalues} * 8;
  // (Most events have neither: an assign of nothing still costs a call.)
  if (p.comm_len || !out.comm.empty()) out.comm.assign(reinterpret_cast<const char*>(at), p.comm_len);
  at += p.comm_len;
  if (p.text_len || !out.text.empty()) out.text.assign(reinterpret_cast<const char*>(at), p.text_len);
  h.read += packed_size(p);
  count_--;
  if (h.read == h.write) {
    // Back to the pool even when it is the last: with a queue per CPU, an idle chunk
    // each would hold memory that the budget counts.
    pool_->give(std::move(h.chunk));
    chunks_.pop_front();
  }
}

}  // namespace uprof
