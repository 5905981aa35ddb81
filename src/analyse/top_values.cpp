#include "uprof/analyse/top_values.h"

#include <algorithm>
#include <bit>
#include <unordered_map>

namespace uprof {

namespace {

bool by_count(const TopValues::Entry& a, const TopValues::Entry& b) {
  return a.count != b.count ? a.count > b.count : a.value < b.value;
}

}  // namespace

void TopValues::allocate() {
  store_.assign(3 * std::size_t{capacity_}, 0);
  index_.assign(std::bit_ceil(4 * std::size_t{capacity_}), kEmpty);
  index_shift_ = static_cast<uint8_t>(64 - std::countr_zero(index_.size()));
}

uint32_t TopValues::home(uint64_t value) const {
  // Fibonacci hashing: the top bits of value * 2^64/phi, as many as the index needs.
  return static_cast<uint32_t>((value * 0x9e3779b97f4a7c15ULL) >> index_shift_);
}

uint32_t TopValues::find(uint64_t value) const {
  if (index_.empty()) return UINT32_MAX;
  const std::size_t mask = index_.size() - 1;
  for (std::size_t h = home(value); index_[h] != kEmpty; h = (h + 1) & mask) {
    if (values()[index_[h]] == value) return index_[h];
  }
  return UINT32_MAX;
}

void TopValues::index_insert(uint32_t slot) {
  const std::size_t mask = index_.size() - 1;
  std::size_t h = home(values()[slot]);
  while (index_[h] != kEmpty) h = (h + 1) & mask;
  index_[h] = static_cast<uint8_t>(slot);
}

void TopValues::index_erase(uint64_t value) {
  const std::size_t mask = index_.size() - 1;
  std::size_t hole = home(value);
  while (values()[index_[hole]] != value) hole = (hole + 1) & mask;  // it is there
  // Backward shift, as in FlatIndex::erase: no tombstones to slow later misses.
  for (std::size_t j = (hole + 1) & mask; index_[j] != kEmpty; j = (j + 1) & mask) {
    const std::size_t h = home(values()[index_[j]]);
    const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
    if (stays) continue;
    index_[hole] = index_[j];
    hole = j;
  }
  index_[hole] = kEmpty;
}

void TopValues::find_min() {
  min_count_ = UINT64_MAX;
  at_min_ = 0;
  for (uint32_t i = 0; i < size_; ++i) {
    if (counts()[i] < min_count_) {
      min_count_ = counts()[i];
      at_min_ = 0;
    }
    if (counts()[i] == min_count_) at_min_ |= uint64_t{1} << i;
  }
}

void TopValues::bump(uint32_t i, uint64_t times) {
  counts()[i] += times;
  const uint64_t bit = uint64_t{1} << i;
  if (at_min_ & bit) {
    at_min_ &= ~bit;
    if (at_min_ == 0) find_min();
  }
}

void TopValues::add(uint64_t value, uint64_t times) {
  if (times == 0) return;
  total_ += times;
  if (size_ > 0 && values()[last_] == value) return bump(last_, times);
  if (const uint32_t i = find(value); i != UINT32_MAX) {
    last_ = i;
    return bump(i, times);
  }
  if (size_ < capacity_) {
    if (store_.empty()) allocate();
    last_ = size_++;
    values()[last_] = value;
    counts()[last_] = times;
    errors()[last_] = 0;
    index_insert(last_);
    if (size_ == capacity_) find_min();
    return;
  }
  // Full: the new value takes the slot of one with the smallest count c, and may
  // have been seen up to c times before, unnoticed.
  const auto i = static_cast<uint32_t>(std::countr_zero(at_min_));
  const uint64_t c = counts()[i];
  index_erase(values()[i]);
  values()[i] = value;
  index_insert(i);
  errors()[i] = c;
  last_ = i;
  exact_ = false;
  bump(i, times);
}

std::vector<TopValues::Entry> TopValues::entries() const {
  std::vector<Entry> out;
  out.reserve(size_);
  for (uint32_t i = 0; i < size_; ++i) out.push_back(Entry{.value = values()[i], .count = counts()[i], .error = errors()[i]});
  return out;
}

void TopValues::merge(const TopValues& other) {
  if (other.total_ == 0) return;
  // A value missing from one sketch may have been seen there up to that sketch's
  // min_count() times: count it as that many, all of them error. The result is
  // the m largest of the union.
  const uint64_t fill_a = min_count(), fill_b = other.min_count();
  std::unordered_map<uint64_t, Entry> all;
  for (const Entry& e : entries()) {
    all[e.value] = Entry{.value = e.value, .count = e.count + fill_b, .error = e.error + fill_b};
  }
  for (const Entry& e : other.entries()) {
    auto [it, fresh] = all.try_emplace(e.value, Entry{.value = e.value, .count = fill_a, .error = fill_a});
    if (!fresh) {  // the other sketch's own count replaces the fill
      it->second.count -= fill_b;
      it->second.error -= fill_b;
    }
    it->second.count += e.count;
    it->second.error += e.error;
  }
  std::vector<Entry> merged;
  merged.reserve(all.size());
  for (const auto& [value, e] : all) merged.push_back(e);
  std::sort(merged.begin(), merged.end(), by_count);
  exact_ = exact_ && other.exact_ && merged.size() <= capacity_;
  if (merged.size() > capacity_) merged.resize(capacity_);

  allocate();
  size_ = static_cast<uint32_t>(merged.size());
  for (uint32_t i = 0; i < size_; ++i) {
    values()[i] = merged[i].value;
    counts()[i] = merged[i].count;
    errors()[i] = merged[i].error;
    index_insert(i);
  }
  total_ += other.total_;
  last_ = 0;
  at_min_ = 0;
  if (size_ == capacity_) find_min();
}

std::vector<TopValues::Entry> TopValues::top(std::size_t k) const {
  std::vector<Entry> out = entries();
  std::sort(out.begin(), out.end(), by_count);
  if (out.size() > k) out.resize(k);
  return out;
}

}  // namespace uprof
