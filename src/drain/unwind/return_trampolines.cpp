#include "uprof/drain/unwind/return_trampolines.h"

#include <algorithm>

namespace uprof {

void ReturnTrampolines::note(uint32_t tid, uint64_t key, uint64_t time, uint64_t return_address) {
  auto& entries = threads_[tid][key];
  if (entries.size() == kPerKey) entries.erase(entries.begin());
  auto at = std::upper_bound(entries.begin(), entries.end(), time, [](uint64_t t, const Entry& e) { return t < e.time; });
  entries.insert(at, Entry{time, return_address});
}

std::optional<uint64_t> ReturnTrampolines::find(uint32_t tid, uint64_t addr, uint64_t time) const {
  auto t = threads_.find(tid);
  if (t == threads_.end()) return std::nullopt;
  const auto& keys = t->second;
  // arm64: the innermost key at or above addr is the call whose frame holds addr (a
  // deeper call's key, its entry sp, is below the frame of the call that made it).
  auto k = exact_ ? keys.find(addr) : keys.lower_bound(addr);
  if (k == keys.end()) return std::nullopt;
  for (auto it = k->second.rbegin(); it != k->second.rend(); ++it)
    if (it->time <= time) return it->return_address;
  return std::nullopt;
}

}  // namespace uprof
