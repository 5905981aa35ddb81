#include "uprof/drain/event_queue.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace uprof {
namespace {

// The fixed part of a queued event; its values, stack frames, off-CPU times, name and
// text follow, each only when it has them.
struct Packed {
  // `lost` carries a Sample's goroutine (Event::goroutine): a sample has no loss count,
  // and a queued sample stays 56 bytes + its values.
  uint64_t time, lost, lost_until, frame;
  // An Object event's number rides in `probe`, its path in the name, its build-id in the text.
  uint32_t probe, pid, tid, missing;
  uint8_t kind, nvalues;  // kind | kOffCpuFollows when the off-CPU times follow the frames
  uint16_t comm_len;
  uint16_t text_len;      // a sample's strings: at most 32 slots of 1026 bytes
  uint16_t nframes;
};
static_assert(sizeof(Packed) == 56 && alignof(Packed) == 8);  // events start at multiples of 8 in a chunk
static_assert(sizeof(StackFrame) == 16 && alignof(StackFrame) == 8);
constexpr uint8_t kOffCpuFollows = 0x80;
constexpr std::size_t kOffCpuBytes = sizeof(OffCpuTimes);
// Every field of Event is carried above: one added to Event must be added here too, or
// the drain would lose it silently between the ring and the file.
static_assert(sizeof(Event) == 8 + 8 + 8 + 8 + kMaxValues * 8 + 8 + 8 + 8 + sizeof(std::string) + 8 + 8 +
                                   sizeof(std::string) + sizeof(std::vector<StackFrame>) + kOffCpuBytes + 8 +
                                   2 * sizeof(std::string),
              "Event has a new field: carry it in EventQueue's packed form (event_queue.cpp)");

constexpr std::size_t round8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

std::size_t packed_size(const Packed& p) {
  return round8(sizeof(Packed) + std::size_t{p.nvalues} * 8 + std::size_t{p.nframes} * sizeof(StackFrame) +
                (p.kind & kOffCpuFollows ? kOffCpuBytes : 0) + p.comm_len + p.text_len);
}

bool carries_offcpu(const Event& e) {
  return e.kind == EventKind::Sample && std::any_of(e.offcpu.begin(), e.offcpu.end(), [](uint64_t t) { return t; });
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
  const bool object = e.kind == EventKind::Object;
  const std::string& name = object ? e.path : e.comm;
  const std::string& text = object ? e.build_id : e.text;
  const uint16_t comm_len = static_cast<uint16_t>(std::min<std::size_t>(name.size(), UINT16_MAX));
  const uint16_t text_len = static_cast<uint16_t>(std::min<std::size_t>(text.size(), UINT16_MAX));
  const uint16_t nframes = static_cast<uint16_t>(std::min<std::size_t>(e.stack.size(), UINT16_MAX));
  const bool offcpu = carries_offcpu(e);
  const std::size_t size = round8(sizeof(Packed) + std::size_t{nvalues} * 8 + std::size_t{nframes} * sizeof(StackFrame) +
                                  (offcpu ? kOffCpuBytes : 0) + comm_len + text_len);
  if (chunks_.empty() || chunks_.back().chunk.capacity - chunks_.back().write < size)
    chunks_.push_back(Held{.chunk = pool_->take(size)});
  Held& h = chunks_.back();
  std::byte* at = h.chunk.bytes.get() + h.write;
  // Built in place: a copy from the stack into the chunk stalled on its own stores.
  new (at) Packed{.time = e.time,
                  .lost = e.kind == EventKind::Sample ? e.goroutine : e.lost,
                  .lost_until = e.lost_until,
                  .frame = e.frame,
                  .probe = object ? e.object : e.probe,
                  .pid = e.pid,
                  .tid = e.tid,
                  .missing = e.missing,
                  .kind = static_cast<uint8_t>(static_cast<uint8_t>(e.kind) | (offcpu ? kOffCpuFollows : 0)),
                  .nvalues = nvalues,
                  .comm_len = comm_len,
                  .text_len = text_len,
                  .nframes = nframes};
  at += sizeof(Packed);
  std::memcpy(at, e.values.data(), std::size_t{nvalues} * 8);
  at += std::size_t{nvalues} * 8;
  if (nframes) std::memcpy(at, e.stack.data(), std::size_t{nframes} * sizeof(StackFrame));
  at += std::size_t{nframes} * sizeof(StackFrame);
  if (offcpu) std::memcpy(at, e.offcpu.data(), kOffCpuBytes);
  at += offcpu ? kOffCpuBytes : 0;
  if (comm_len) std::memcpy(at, name.data(), comm_len);
  at += comm_len;
  if (text_len) std::memcpy(at, text.data(), text_len);
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
  out.kind = static_cast<EventKind>(p.kind & ~kOffCpuFollows);
  const bool object = out.kind == EventKind::Object;
  out.probe = object ? 0 : p.probe;
  out.object = object ? p.probe : 0;
  out.pid = p.pid;
  out.tid = p.tid;
  out.time = p.time;
  out.missing = p.missing;
  const bool sample = out.kind == EventKind::Sample;
  out.lost = sample ? 0 : p.lost;
  out.goroutine = sample ? p.lost : 0;
  out.lost_until = p.lost_until;
  out.frame = p.frame;
  // The slots past the event's own stay 0, as in a new Event: `out` is reused.
  if (p.nvalues < out.nvalues) std::fill(out.values.begin() + p.nvalues, out.values.begin() + out.nvalues, 0);
  out.nvalues = p.nvalues;
  std::memcpy(out.values.data(), at, std::size_t{p.nvalues} * 8);
  at += std::size_t{p.nvalues} * 8;
  // (Most events have none of these: an assign of nothing still costs a call.)
  if (p.nframes || !out.stack.empty()) {
    out.stack.resize(p.nframes);
    std::memcpy(out.stack.data(), at, std::size_t{p.nframes} * sizeof(StackFrame));
  }
  at += std::size_t{p.nframes} * sizeof(StackFrame);
  if (p.kind & kOffCpuFollows) {
    std::memcpy(out.offcpu.data(), at, kOffCpuBytes);
    at += kOffCpuBytes;
  } else {
    out.offcpu = {};
  }
  std::string& name = object ? out.path : out.comm;
  std::string& text = object ? out.build_id : out.text;
  if (p.comm_len || !name.empty()) name.assign(reinterpret_cast<const char*>(at), p.comm_len);
  at += p.comm_len;
  if (p.text_len || !text.empty()) text.assign(reinterpret_cast<const char*>(at), p.text_len);
  if (!object) {
    if (!out.path.empty()) out.path.clear();
    if (!out.build_id.empty()) out.build_id.clear();
  } else {
    out.comm.clear();
    out.text.clear();
  }
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
