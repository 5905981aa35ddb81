#include "uprof/attach/ring_buffer.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace uprof {
namespace {

std::size_t page_size() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }
bool is_pow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::string where(int cpu) {
  return cpu >= 0 ? "drain: ring buffer of cpu " + std::to_string(cpu) : std::string("drain: ring buffer");
}

}  // namespace

Result<RingBuffer> RingBuffer::map(int fd, std::size_t data_pages, int cpu) {
  if (!is_pow2(data_pages))
    return err(where(cpu), ": ", data_pages, " data pages: must be a power of two");
  std::size_t len = (data_pages + 1) * page_size();
  void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int e = errno;
    return err(where(cpu), ": mmap of ", len / 1024, " KiB on perf fd ", fd, ": ",
               e == EPERM ? "over kernel.perf_event_mlock_kb (raise it, or run as root): " : "",
               std::strerror(e));
  }
  return adopt(UniqueMmap(p, len), fd, cpu);
}

Result<RingBuffer> RingBuffer::adopt(UniqueMmap mapping, int fd, int cpu) {
  std::size_t page = page_size();
  if (!mapping.valid() || mapping.size() < 2 * page || mapping.size() % page != 0 ||
      !is_pow2(mapping.size() / page - 1))
    return err(where(cpu), ": a mapping of ", mapping.size(), " bytes is not 1 + 2^n pages");
  auto* meta = static_cast<perf_event_mmap_page*>(mapping.get());
  // data_offset/data_size exist since Linux 4.1; before, data starts at page 1.
  uint64_t off = meta->data_offset ? meta->data_offset : page;
  uint64_t size = meta->data_size ? meta->data_size : mapping.size() - page;
  if (!is_pow2(size) || off + size > mapping.size())
    return err(where(cpu), ": data_offset ", off, " / data_size ", size,
               " do not fit a mapping of ", mapping.size(), " bytes");
  RingBuffer rb;
  rb.data_ = static_cast<std::byte*>(mapping.get()) + off;
  rb.size_ = size;
  rb.map_ = std::move(mapping);
  rb.fd_ = fd;
  rb.cpu_ = cpu;
  return rb;
}

uint64_t RingBuffer::pending_bytes() const {
  auto* meta = metadata();
  uint64_t head = std::atomic_ref<__u64>(meta->data_head).load(std::memory_order_acquire);
  uint64_t tail = std::atomic_ref<__u64>(meta->data_tail).load(std::memory_order_relaxed);
  return head - tail;
}

Result<DrainStats> RingBuffer::drain(const RecordFn& fn) {
  auto* meta = metadata();
  // Once per pass: the kernel has finished every record below this head (it
  // publishes the head after writing; acquire orders our reads after its writes).
  const uint64_t head = std::atomic_ref<__u64>(meta->data_head).load(std::memory_order_acquire);
  // Only we write the tail.
  const uint64_t start = std::atomic_ref<__u64>(meta->data_tail).load(std::memory_order_relaxed);
  const uint64_t mask = size_ - 1;
  DrainStats stats;

  auto publish = [&](uint64_t tail) {
    // Release: our reads of the records happen before the kernel may reuse the space.
    std::atomic_ref<__u64>(meta->data_tail).store(tail, std::memory_order_release);
  };

  if (head - start > size_) {
    return err(where(cpu_), ": data_head ", head, " is ", head - start,
               " bytes past data_tail ", start, ", more than the ", size_, "-byte buffer");
  }

  uint64_t pos = start;
  while (pos != head) {
    uint64_t avail = head - pos;
    std::size_t off = static_cast<std::size_t>(pos & mask);
    perf_event_header hdr{};
    if (avail < sizeof hdr) {
      publish(pos);
      return err(where(cpu_), ": ", avail, " stray bytes at position ", pos, " before data_head");
    }
    // A header never straddles the end (records are multiples of 8 bytes), but
    // copy it in two parts anyway rather than trust that.
    std::size_t first = std::min<std::size_t>(sizeof hdr, size_ - off);
    std::memcpy(&hdr, data_ + off, first);
    if (first < sizeof hdr)
      std::memcpy(reinterpret_cast<std::byte*>(&hdr) + first, data_, sizeof hdr - first);
    if (hdr.size < sizeof hdr || hdr.size > avail) {
      publish(pos);
      return err(where(cpu_), ": record at position ", pos, " (type ", hdr.type, ") has size ",
                 hdr.size, " but ", avail, " bytes remain before data_head");
    }
    std::span<const std::byte> rec;
    if (off + hdr.size <= size_) {
      rec = {data_ + off, hdr.size};
    } else {
      // The record wraps: [off, end) then [0, rest). Parse a contiguous copy.
      scratch_.resize(hdr.size);
      std::size_t tail_part = size_ - off;
      std::memcpy(scratch_.data(), data_ + off, tail_part);
      std::memcpy(scratch_.data() + tail_part, data_, hdr.size - tail_part);
      rec = {scratch_.data(), hdr.size};
      ++stats.wrapped;
    }
    if (Status st = fn(rec); !st) {
      publish(pos);
      return std::move(st).take_error();
    }
    pos += hdr.size;
    ++stats.records;
    stats.bytes += hdr.size;
  }
  publish(pos);
  return stats;
}

}  // namespace uprof
