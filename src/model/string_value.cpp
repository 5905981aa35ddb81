#include "uprof/model/string_value.h"

namespace uprof {

uint64_t StringPool::intern(std::string_view bytes, bool cut) {
  // The key holds the cut flag as its last byte: "abc" cut and "abc" whole differ.
  std::string key;
  key.reserve(bytes.size() + 1);
  key.append(bytes);
  key.push_back(cut ? '\1' : '\0');
  if (auto it = ids_.find(key); it != ids_.end()) return it->second;
  strings_.push_back(std::move(key));
  const uint64_t id = strings_.size();
  ids_.emplace(strings_.back(), id);
  return id;
}

StringBytes StringPool::text(uint64_t id) const {
  if (id == 0 || id > strings_.size()) return {};
  std::string_view key = strings_[id - 1];
  return {key.substr(0, key.size() - 1), key.back() == '\1'};
}

StringPool& recorded_strings() {
  static StringPool pool;
  return pool;
}

}  // namespace uprof
