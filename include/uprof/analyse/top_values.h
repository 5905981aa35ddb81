// The most frequent values of a captured argument or return value, in bounded
// memory: the Space-Saving sketch (Metwally, Agrawal, El Abbadi, 2005).
//
// It holds at most `capacity` (m) values with counts. A value already held counts
// up; a new value takes a free slot, or replaces the value with the smallest count
// c and starts from c + 1 with error c (it may have been seen c times unnoticed).
// After N values (weights summed):
//   - a held value's true count lies in [count - error, count], and error <= N/m;
//   - a value not held was seen at most min_count() times, and min_count() <= N/m:
//     so every value seen more than N/m times is held;
//   - until m distinct values have been seen, every count is exact (error 0).
// Example: m = 32 over a call stream where read(fd=3) is 90% of calls: fd 3 is
// held, and its count is off by at most N/32 (in practice by far less).
// merge() keeps these for the combined stream, N = N1 + N2: a value missing from
// one side is counted as that side's min_count() (all of it error), and the m
// largest are kept; each side's held counts sum to at most its N, so the m-th
// largest merged count, the new min_count(), is still at most N/m.
#pragma once

#include <cstdint>
#include <vector>

namespace uprof {

class TopValues {
 public:
  struct Entry {
    uint64_t value = 0;
    uint64_t count = 0;  // an upper bound of the true count
    uint64_t error = 0;  // count - error is a lower bound
  };
  static constexpr uint32_t kMaxCapacity = 64;

  // `capacity` is clamped to [1, 64].
  explicit TopValues(uint32_t capacity = 32)
      : capacity_(capacity == 0 ? 1 : capacity > kMaxCapacity ? kMaxCapacity : capacity) {}

  void add(uint64_t value, uint64_t times = 1);
  void merge(const TopValues& other);

  // The k largest counts, largest first (ties by value, smallest first).
  std::vector<Entry> top(std::size_t k) const;
  uint64_t total() const { return total_; }
  uint32_t capacity() const { return capacity_; }
  // The most times a value not held can have been seen (0 while nothing was evicted).
  uint64_t min_count() const { return exact_ ? 0 : min_count_; }
  // Whether every count is exact (no value was ever replaced).
  bool exact() const { return exact_; }

 private:
  // Values, counts and errors in three runs of capacity_ words, and an open-addressing
  // index from value to slot (load <= 1/4, so clusters stay short): a value never seen before (a new pointer)
  // costs a hash and a probe or two, not a scan of every slot. Nothing allocates
  // after the first add.
  uint64_t* values() { return store_.data(); }
  uint64_t* counts() { return store_.data() + capacity_; }
  uint64_t* errors() { return store_.data() + 2 * capacity_; }
  const uint64_t* values() const { return store_.data(); }
  const uint64_t* counts() const { return store_.data() + capacity_; }
  const uint64_t* errors() const { return store_.data() + 2 * capacity_; }
  void allocate();
  uint32_t home(uint64_t value) const;
  // The slot holding `value`, or UINT32_MAX.
  uint32_t find(uint64_t value) const;
  void index_insert(uint32_t slot);
  void index_erase(uint64_t value);
  void bump(uint32_t i, uint64_t times);
  void find_min();
  std::vector<Entry> entries() const;

  std::vector<uint64_t> store_;
  std::vector<uint8_t> index_;  // slot numbers, kEmpty when free; a power of two >= 4 * capacity_
  static constexpr uint8_t kEmpty = 0xff;
  uint8_t index_shift_ = 64;    // 64 - log2(index_.size())
  uint32_t size_ = 0;
  uint32_t capacity_;
  uint32_t last_ = 0;           // the slot of the previous value: runs of one value skip the scan
  uint64_t total_ = 0;
  // Once full: the smallest count and which slots hold it. Replacing takes any of
  // them without a scan; the scan happens when the last one has counted up, so a
  // stream of distinct values (pointers) pays it once per `capacity` evictions or so.
  uint64_t min_count_ = 0;
  uint64_t at_min_ = 0;
  bool exact_ = true;
};

}  // namespace uprof
