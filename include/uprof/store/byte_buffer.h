// A growable byte buffer for the data file's encoder: bytes are written through a
// pointer into room made beforehand, with none of std::string's per-byte work (its
// small-string check, the NUL after every push_back) and no stack copy between a
// varint and its place (a small append of a just-written buffer stalled the store
// that followed it: that was most of the writer's time).
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace uprof {

class ByteBuffer {
 public:
  // Room for at least `n` more bytes at end().
  void reserve_more(std::size_t n) {
    if (cap_ - size_ < n) grow(n);
  }
  char* end() { return data_.get() + size_; }
  // After writing `n` bytes at end().
  void advance(std::size_t n) { size_ += n; }

  void push_back(char c) {
    reserve_more(1);
    data_[size_++] = c;
  }
  void append(std::string_view s) {
    reserve_more(s.size());
    if (!s.empty()) std::memcpy(end(), s.data(), s.size());
    size_ += s.size();
  }
  std::string_view view() const { return {data_.get(), size_}; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }

 private:
  void grow(std::size_t n) {
    std::size_t cap = cap_ ? cap_ : 256;
    while (cap - size_ < n) cap *= 2;
    auto bigger = std::make_unique_for_overwrite<char[]>(cap);
    if (size_) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    cap_ = cap;
  }
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0, cap_ = 0;
};

}  // namespace uprof
