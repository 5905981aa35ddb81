// A perf ring buffer in anonymous memory, with the test playing the kernel:
// write() copies a record at data_head (wrapping at the end) and publishes the
// new head, as perf_output_end() does.
#pragma once

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <span>
#include <stdexcept>

#include "uprof/attach/ring_buffer.h"

namespace uprof::test {

inline std::size_t page_bytes() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

// An anonymous mapping of 1 + data_pages pages, laid out like a perf ring.
inline UniqueMmap anonymous_ring(std::size_t data_pages) {
  std::size_t len = (1 + data_pages) * page_bytes();
  void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
  auto* meta = static_cast<perf_event_mmap_page*>(p);
  meta->data_offset = page_bytes();
  meta->data_size = data_pages * page_bytes();
  return UniqueMmap(p, len);
}

class FakeKernel {
 public:
  explicit FakeKernel(RingBuffer& rb) : rb_(rb) {}

  // Appends `rec` at the head; false (and nothing written) when it does not fit
  // in the free space, as the kernel would then count it as lost.
  bool write(std::span<const std::byte> rec) {
    auto* meta = rb_.metadata();
    uint64_t head = meta->data_head;
    uint64_t tail = std::atomic_ref<__u64>(meta->data_tail).load(std::memory_order_acquire);
    std::size_t size = rb_.data_size();
    if (head - tail + rec.size() > size) return false;
    auto* data = reinterpret_cast<std::byte*>(meta) + meta->data_offset;
    std::size_t off = head & (size - 1);
    std::size_t first = std::min(rec.size(), size - off);
    std::memcpy(data + off, rec.data(), first);
    std::memcpy(data, rec.data() + first, rec.size() - first);
    std::atomic_ref<__u64>(meta->data_head).store(head + rec.size(), std::memory_order_release);
    return true;
  }

  uint64_t head() const { return rb_.metadata()->data_head; }
  uint64_t tail() const { return rb_.metadata()->data_tail; }

 private:
  RingBuffer& rb_;
};

}  // namespace uprof::test
