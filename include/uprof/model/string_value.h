// Captured strings, in their two forms.
//
// From an engine to the store, an Event carries a String slot's bytes in Event::text,
// and the slot's value says where they are:
//   value = offset << 32 | cut << 31 | length       ("key17" at text[5..10): 5 << 32 | 5)
// `cut`: the string went on past the probe's string_max bytes, which were kept.
//
// Read back from a data file, the slot holds an id of the process's StringPool
// instead: equal strings get equal ids, so pairing, top values and --by treat a
// string as they treat a number, and the text is looked up to print it.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

#include "uprof/model/recording.h"

namespace uprof {

inline constexpr uint64_t kStringCutBit = uint64_t{1} << 31;

struct StringBytes {
  std::string_view bytes{};
  bool cut = false;
};

// Appends `bytes` to e.text as slot `slot`'s string.
inline void put_string_value(Event& e, unsigned slot, std::string_view bytes, bool cut) {
  e.values[slot] = (static_cast<uint64_t>(e.text.size()) << 32) | (cut ? kStringCutBit : 0) |
                   (static_cast<uint64_t>(bytes.size()) & (kStringCutBit - 1));
  e.text.append(bytes);
}

// Slot `slot`'s bytes in an engine's event; empty when the value points outside e.text.
inline StringBytes string_value(const Event& e, unsigned slot) {
  const uint64_t v = e.values[slot];
  const uint64_t off = v >> 32, len = v & (kStringCutBit - 1);
  if (off > e.text.size() || len > e.text.size() - off) return {};
  return {std::string_view(e.text).substr(off, len), (v & kStringCutBit) != 0};
}

// Distinct strings, each with an id that stays valid for the life of the pool.
class StringPool {
 public:
  uint64_t intern(std::string_view bytes, bool cut);
  // The string of `id`; empty for an id this pool never gave.
  StringBytes text(uint64_t id) const;
  std::size_t size() const { return strings_.size(); }

 private:
  std::deque<std::string> strings_;                       // id - 1 -> bytes, a cut flag last
  std::unordered_map<std::string_view, uint64_t> ids_;    // views into strings_
};

// The strings of every recording this process reads: a data file's reader interns a
// sample's strings here, and whatever prints a value looks them up.
StringPool& recorded_strings();

}  // namespace uprof
