// A bounds-checked cursor over bytes. Every decoder (ring buffer records, the data
// file, ld.so.cache) reads through it: a read past the end fails and leaves the
// cursor where it was, so the caller can say at which byte offset the input broke.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

namespace uprof {

class ByteReader {
 public:
  ByteReader() = default;
  explicit ByteReader(std::span<const std::byte> data) : data_(data) {}
  ByteReader(const void* p, std::size_t n)
      : data_(static_cast<const std::byte*>(p), n) {}

  std::size_t offset() const { return pos_; }
  std::size_t size() const { return data_.size(); }
  std::size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }

  // Reads a trivially copyable T (memcpy: no alignment assumptions).
  template <class T>
  std::optional<T> read() {
    static_assert(std::is_trivially_copyable_v<T>);
    if (remaining() < sizeof(T)) return std::nullopt;
    T v;
    std::memcpy(&v, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  // Reads a T at an absolute offset without moving the cursor.
  template <class T>
  std::optional<T> peek_at(std::size_t off) const {
    static_assert(std::is_trivially_copyable_v<T>);
    if (off > data_.size() || data_.size() - off < sizeof(T)) return std::nullopt;
    T v;
    std::memcpy(&v, data_.data() + off, sizeof(T));
    return v;
  }

  std::optional<std::span<const std::byte>> bytes(std::size_t n) {
    if (remaining() < n) return std::nullopt;
    auto s = data_.subspan(pos_, n);
    pos_ += n;
    return s;
  }

  bool skip(std::size_t n) {
    if (remaining() < n) return false;
    pos_ += n;
    return true;
  }

  bool seek(std::size_t off) {
    if (off > data_.size()) return false;
    pos_ = off;
    return true;
  }

  // A NUL-terminated string starting at absolute offset `off`; nullopt if no NUL
  // comes before the end.
  std::optional<std::string_view> cstring_at(std::size_t off) const {
    if (off >= data_.size()) return std::nullopt;
    auto* p = reinterpret_cast<const char*>(data_.data()) + off;
    auto* nul = static_cast<const char*>(std::memchr(p, 0, data_.size() - off));
    if (!nul) return std::nullopt;
    return std::string_view(p, static_cast<std::size_t>(nul - p));
  }

  std::span<const std::byte> data() const { return data_; }

 private:
  std::span<const std::byte> data_;
  std::size_t pos_ = 0;
};

}  // namespace uprof
