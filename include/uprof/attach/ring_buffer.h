// One perf ring buffer: a metadata page (struct perf_event_mmap_page) followed by
// 2^n data pages that the kernel fills and uprof empties.
//
//   data_head  written by the kernel: bytes ever produced (grows forever)
//   data_tail  written by us: bytes ever consumed
//   record at  data + (tail & (data_size - 1)), its size in its perf_event_header
//
// drain() reads data_head once (acquire), hands out every record below it, then
// publishes data_tail (release) for exactly the bytes consumed, so nothing is
// read twice and nothing is skipped. perf record 6.1 reads the head twice per
// pass, and duplicate samples were seen in its output at high rates: not here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "uprof/util/result.h"
#include "uprof/util/unique_fd.h"

struct perf_event_mmap_page;

namespace uprof {

struct DrainStats {
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t wrapped = 0;  // records copied out because they crossed the buffer's end
};

class RingBuffer {
 public:
  // The callback sees one whole record, header included. The span is valid only
  // during the call (it points into the ring or into a scratch copy).
  using RecordFn = std::function<Status(std::span<const std::byte> record)>;

  // Maps the ring of perf event `fd`: one metadata page + `data_pages` pages (a
  // power of two). `cpu` is a label for errors and for the caller.
  static Result<RingBuffer> map(int fd, std::size_t data_pages, int cpu = -1);

  // Takes over a mapping laid out like a perf ring (1 + 2^n pages). Tests build
  // one in anonymous memory and play the kernel's part by writing data_head.
  static Result<RingBuffer> adopt(UniqueMmap mapping, int fd = -1, int cpu = -1);

  RingBuffer(RingBuffer&&) noexcept = default;
  RingBuffer& operator=(RingBuffer&&) noexcept = default;
  RingBuffer(const RingBuffer&) = delete;
  RingBuffer& operator=(const RingBuffer&) = delete;

  // One pass: every record written before the pass started. If `fn` fails, the
  // records before the failing one stay consumed and the error is returned; a
  // record whose header is impossible (size < 8, or running past data_head) is an
  // error naming its position, and nothing past it is consumed.
  Result<DrainStats> drain(const RecordFn& fn);

  // Bytes written and not yet consumed.
  uint64_t pending_bytes() const;

  int fd() const { return fd_; }
  int cpu() const { return cpu_; }
  std::size_t data_size() const { return size_; }
  perf_event_mmap_page* metadata() const { return static_cast<perf_event_mmap_page*>(map_.get()); }

 private:
  RingBuffer() = default;
  UniqueMmap map_;
  int fd_ = -1;
  int cpu_ = -1;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;            // a power of two
  std::vector<std::byte> scratch_;  // for records that wrap the end
};

}  // namespace uprof
