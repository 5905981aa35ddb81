// Reads a BPF ring buffer (BPF_MAP_TYPE_RINGBUF) in passes of bounded size, so that a
// flood of records can never keep the reader inside one pass. libbpf's
// ring_buffer__consume reads until it finds the ring empty: while producers keep up
// with it (two threads calling malloc under -a), it never returns, and whatever it
// hands on piles up in user space (9.4 GB seen).
//
// The mapping, as the kernel lays it out (Linux 5.8+, include/uapi/linux/bpf.h):
//
//   page 0          consumer position (ours: read-write)
//   page 1          producer position (the kernel's: read-only)
//   pages 2..       the data, N bytes (a power of two), mapped twice in a row,
//                   so a record that wraps the end reads as one piece
//
//   record at data + (pos & (N - 1)):  u32 len | BUSY (1 << 31) | DISCARD (1 << 30),
//                                      u32 page offset (the kernel's), then len bytes;
//                                      the next one at pos + round_up(8 + len, 8)
//
// A pass hands out records up to the producer position read when it began, stops early
// at a record still being written (BUSY: a later pass takes it), and skips discarded
// ones. Consumed space goes back to the kernel in steps (release()), not record by
// record: each store of the consumer position is a cache line the producers must
// fetch again.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "uprof/util/result.h"
#include "uprof/util/unique_fd.h"

namespace uprof {

class BpfRingReader {
 public:
  // Maps the ring of the BPF ring-buffer map `map_fd` (the fd stays the caller's).
  static Result<BpfRingReader> open(int map_fd);

  BpfRingReader(BpfRingReader&&) noexcept = default;
  BpfRingReader& operator=(BpfRingReader&&) noexcept = default;
  BpfRingReader(const BpfRingReader&) = delete;
  BpfRingReader& operator=(const BpfRingReader&) = delete;

  // Starts a pass: the records the kernel had reserved when it began (some may still
  // be in writing).
  void begin_pass() { end_ = load_acquire(producer_); }

  // The next record of the pass (its payload, valid until release()), or nothing when
  // the pass has read all it saw or the next record is still being written.
  std::optional<std::span<const std::byte>> next() {
    for (;;) {
      if (pos_ >= end_) return std::nullopt;
      const std::byte* at = data_ + (pos_ & mask_);
      const uint32_t len = std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(const_cast<std::byte*>(at)))
                               .load(std::memory_order_acquire);
      if (len & kBusy) return std::nullopt;
      const uint32_t size = len & ~(kBusy | kDiscard);
      pos_ += (uint64_t{size} + kHeader + 7) & ~uint64_t{7};
      if (len & kDiscard) continue;
      return std::span<const std::byte>(at + kHeader, size);
    }
  }

  // Gives the space of every record handed out so far back to the kernel.
  void release() {
    if (pos_ != released_) std::atomic_ref<uint64_t>(*consumer_).store(released_ = pos_, std::memory_order_release);
  }

  // Bytes handed out since the last release().
  uint64_t unreleased() const { return pos_ - released_; }
  // Bytes the kernel has reserved that are not yet read.
  uint64_t pending() const { return load_acquire(producer_) - pos_; }
  std::size_t size() const { return mask_ + 1; }

 private:
  static constexpr uint32_t kBusy = 1u << 31, kDiscard = 1u << 30, kHeader = 8;
  BpfRingReader() = default;
  static uint64_t load_acquire(const uint64_t* p) {
    return std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(p)).load(std::memory_order_acquire);
  }

  UniqueMmap consumer_map_, data_map_;
  uint64_t* consumer_ = nullptr;
  const uint64_t* producer_ = nullptr;
  const std::byte* data_ = nullptr;
  uint64_t mask_ = 0;
  uint64_t pos_ = 0, end_ = 0, released_ = 0;
};

}  // namespace uprof
