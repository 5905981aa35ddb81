// Builds perf records byte by byte for decoder and ring-buffer tests, the way the
// kernel lays them out (little-endian, header first, size patched at the end).
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace uprof::test {

class RecordBuilder {
 public:
  explicit RecordBuilder(uint32_t type, uint16_t misc = PERF_RECORD_MISC_USER) {
    perf_event_header h{type, misc, 0};
    put(h);
  }
  template <class T>
  RecordBuilder& put(const T& v) {
    std::size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &v, sizeof(T));
    return *this;
  }
  RecordBuilder& u64(uint64_t v) { return put(v); }
  RecordBuilder& u32(uint32_t v) { return put(v); }
  RecordBuilder& raw(const std::vector<std::byte>& b) {
    bytes_.insert(bytes_.end(), b.begin(), b.end());
    return *this;
  }
  // The finished record, header.size set to its length.
  std::vector<std::byte> build() const {
    std::vector<std::byte> out = bytes_;
    uint16_t size = static_cast<uint16_t>(out.size());
    std::memcpy(out.data() + offsetof(perf_event_header, size), &size, sizeof size);
    return out;
  }

 private:
  std::vector<std::byte> bytes_;
};

// A PERF_RECORD_SAMPLE for sample_type IDENTIFIER | TID | TIME [| REGS_USER].
inline std::vector<std::byte> sample_record(uint64_t id, uint32_t pid, uint32_t tid, uint64_t time,
                                            std::span<const uint64_t> regs = {},
                                            uint64_t abi = PERF_SAMPLE_REGS_ABI_64) {
  RecordBuilder b(PERF_RECORD_SAMPLE);
  b.u64(id).u32(pid).u32(tid).u64(time);
  if (!regs.empty()) {
    b.u64(abi);
    for (uint64_t r : regs) b.u64(r);
  }
  return b.build();
}

}  // namespace uprof::test
