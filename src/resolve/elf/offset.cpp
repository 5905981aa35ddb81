#include "uprof/resolve/elf/offset.h"

namespace uprof {

const LoadSegment* segment_for_vaddr(std::span<const LoadSegment> loads, uint64_t vaddr) {
  for (auto& s : loads)
    if (vaddr >= s.vaddr && vaddr - s.vaddr < s.filesz) return &s;
  return nullptr;
}

std::optional<uint64_t> vaddr_to_offset(std::span<const LoadSegment> loads, uint64_t vaddr) {
  auto* s = segment_for_vaddr(loads, vaddr);
  if (!s) return std::nullopt;
  return s->offset + (vaddr - s->vaddr);
}

std::optional<uint64_t> offset_to_vaddr(std::span<const LoadSegment> loads, uint64_t off) {
  // Segments may share a file page (the RW segment often starts inside the page
  // that ends the RX one); prefer the executable one, as probes live there.
  const LoadSegment* best = nullptr;
  for (auto& s : loads) {
    if (off >= s.offset && off - s.offset < s.filesz) {
      if (!best || (s.executable && !best->executable)) best = &s;
    }
  }
  if (!best) return std::nullopt;
  return best->vaddr + (off - best->offset);
}

}  // namespace uprof
