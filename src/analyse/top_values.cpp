#include "uprof/analyse/top_values.h"

#include <algorithm>
#include <unordered_map>

namespace uprof {

void TopValues::add(uint64_t value, uint64_t times) {
  if (times == 0) return;
  total_ += times;
  if (last_ < entries_.size() && entries_[last_].value == value) {
    entries_[last_].count += times;
    return;
  }
  // A linear scan over at most m (32) slots: cheaper than hashing at this size,
  // and it allocates nothing after the first capacity_ values.
  for (uint32_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].value == value) {
      entries_[i].count += times;
      last_ = i;
      return;
    }
  }
  if (entries_.size() < capacity_) {
    if (entries_.empty()) entries_.reserve(capacity_);
    entries_.push_back(Entry{.value = value, .count = times, .error = 0});
    last_ = static_cast<uint32_t>(entries_.size() - 1);
    return;
  }
  auto smallest = std::min_element(entries_.begin(), entries_.end(),
                                   [](const Entry& a, const Entry& b) { return a.count < b.count; });
  *smallest = Entry{.value = value, .count = smallest->count + times, .error = smallest->count};
  last_ = static_cast<uint32_t>(smallest - entries_.begin());
  exact_ = false;
}

uint64_t TopValues::min_count() const {
  if (exact_) return 0;
  uint64_t m = UINT64_MAX;
  for (const Entry& e : entries_) m = std::min(m, e.count);
  return m;
}

void TopValues::merge(const TopValues& other) {
  if (other.total_ == 0) return;
  // A value missing from one sketch may have been seen there up to that sketch's
  // min_count() times: count it as that many, all of them error. The result is
  // the m largest of the union.
  const uint64_t fill_a = min_count(), fill_b = other.min_count();
  std::unordered_map<uint64_t, Entry> all;
  for (const Entry& e : entries_) {
    all[e.value] = Entry{.value = e.value, .count = e.count + fill_b, .error = e.error + fill_b};
  }
  for (const Entry& e : other.entries_) {
    auto [it, fresh] = all.try_emplace(e.value, Entry{.value = e.value, .count = fill_a, .error = fill_a});
    if (!fresh) {  // undo the fill: the other sketch's own count replaces it
      it->second.count -= fill_b;
      it->second.error -= fill_b;
    }
    it->second.count += e.count;
    it->second.error += e.error;
  }
  std::vector<Entry> merged;
  merged.reserve(all.size());
  for (const auto& [value, e] : all) merged.push_back(e);
  std::sort(merged.begin(), merged.end(), [](const Entry& a, const Entry& b) {
    return a.count != b.count ? a.count > b.count : a.value < b.value;
  });
  exact_ = exact_ && other.exact_ && merged.size() <= capacity_;
  if (merged.size() > capacity_) merged.resize(capacity_);
  entries_ = std::move(merged);
  total_ += other.total_;
  last_ = 0;
}

std::vector<TopValues::Entry> TopValues::top(std::size_t k) const {
  std::vector<Entry> out = entries_;
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
    return a.count != b.count ? a.count > b.count : a.value < b.value;
  });
  if (out.size() > k) out.resize(k);
  return out;
}

}  // namespace uprof
