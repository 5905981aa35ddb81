#include "uprof/analyse/flat_index.h"

namespace uprof {

namespace {

// The splitmix64 finaliser: tids are small consecutive integers, which would
// all land in neighbouring slots with an identity hash.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace

std::size_t FlatIndex::home(const Key& key) const {
  // One finaliser round over both halves: b is multiplied first so that (a, b) and
  // (b, a) land apart.
  return mix(key.a ^ (key.b * 0x9e3779b97f4a7c15ULL)) & (slots_.size() - 1);
}

void FlatIndex::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
  const std::size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (!s.used) continue;
    std::size_t i = home(s.key);
    while (slots_[i].used) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

FlatIndex::Insertion FlatIndex::insert(Key key, uint32_t position_if_new) {
  if ((size_ + 1) * 2 > slots_.size()) grow();
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = home(key);
  while (slots_[i].used) {
    if (slots_[i].key == key) return {.position = slots_[i].position, .inserted = false};
    i = (i + 1) & mask;
  }
  slots_[i] = Slot{.key = key, .position = position_if_new, .used = true};
  ++size_;
  return {.position = position_if_new, .inserted = true};
}

std::optional<uint32_t> FlatIndex::find(Key key) const {
  if (slots_.empty()) return std::nullopt;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = home(key); slots_[i].used; i = (i + 1) & mask) {
    if (slots_[i].key == key) return slots_[i].position;
  }
  return std::nullopt;
}

bool FlatIndex::erase(Key key) {
  if (slots_.empty()) return false;
  const std::size_t mask = slots_.size() - 1;
  std::size_t hole = home(key);
  while (true) {
    if (!slots_[hole].used) return false;
    if (slots_[hole].key == key) break;
    hole = (hole + 1) & mask;
  }
  // Backward shift: move later members of the probe run into the hole when their
  // home slot does not lie cyclically in (hole, j], so every key stays reachable
  // from its home without tombstones.
  for (std::size_t j = (hole + 1) & mask; slots_[j].used; j = (j + 1) & mask) {
    const std::size_t h = home(slots_[j].key);
    const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
    if (stays) continue;
    slots_[hole] = slots_[j];
    hole = j;
  }
  slots_[hole] = Slot{};
  --size_;
  return true;
}

}  // namespace uprof
