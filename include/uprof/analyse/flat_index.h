// An open-addressing hash index from a 128-bit key to a dense uint32 position,
// for the per-event lookups of the analyse stage: tid -> thread state in the
// pairer, (function, tid, argument value) -> group in the aggregator.
//
// Why not std::unordered_map: a report walks ~10M events, and each lookup there
// chases a node pointer and may allocate on insert. Here the slots are one flat
// vector (linear probing, load <= 1/2), so a hit is one or two cache lines and
// nothing allocates once the table has grown to the number of live keys.
// Erase uses backward shifting (no tombstones), so a program that creates and
// ends 1M short-lived threads keeps the table at the size of its live threads.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace uprof {

class FlatIndex {
 public:
  struct Key {
    uint64_t a = 0;
    uint64_t b = 0;
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct Insertion {
    uint32_t position;  // the stored position (the old one when the key was present)
    bool inserted;
  };

  // Looks `key` up; when absent stores `position_if_new` for it.
  Insertion insert(Key key, uint32_t position_if_new);
  std::optional<uint32_t> find(Key key) const;
  // Returns whether the key was present.
  bool erase(Key key);
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    Key key;
    uint32_t position = 0;
    bool used = false;
  };
  std::size_t home(const Key& key) const;
  void grow();

  std::vector<Slot> slots_;  // size is 0 or a power of two
  std::size_t size_ = 0;
};

}  // namespace uprof
