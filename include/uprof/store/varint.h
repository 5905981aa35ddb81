// LEB128 varints and zigzag, the data file's integer encoding: small numbers
// (probe indices, time deltas, argument values like 7 or -1) take one or two bytes.
//   300 -> ac 02        zigzag(-1) = 1, zigzag(1) = 2
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "uprof/store/byte_buffer.h"
#include "uprof/util/byte_reader.h"

namespace uprof {

inline uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t unzigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

inline void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// The same into the event encoder's buffer: written in place, at most 10 bytes.
inline void put_varint(ByteBuffer& out, uint64_t v) {
  out.reserve_more(10);
  char* p = out.end();
  char* const start = p;
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  out.advance(static_cast<std::size_t>(p - start));
}

inline void put_string(std::string& out, std::string_view s) {
  put_varint(out, s.size());
  out.append(s);
}

inline void put_string(ByteBuffer& out, std::string_view s) {
  put_varint(out, s.size());
  out.append(s);
}

// nullopt on truncation or on a varint longer than 10 bytes.
inline std::optional<uint64_t> get_varint(ByteReader& r) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    auto b = r.read<uint8_t>();
    if (!b) return std::nullopt;
    if (shift == 63 && (*b & 0x7e)) return std::nullopt;  // more than 64 bits
    v |= static_cast<uint64_t>(*b & 0x7f) << shift;
    if (!(*b & 0x80)) return v;
  }
  return std::nullopt;
}

// A length-prefixed string no longer than `max` bytes.
inline std::optional<std::string> get_string(ByteReader& r, std::size_t max = 1 << 20) {
  auto n = get_varint(r);
  if (!n || *n > max) return std::nullopt;
  auto b = r.bytes(static_cast<std::size_t>(*n));
  if (!b) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(b->data()), b->size());
}

}  // namespace uprof
