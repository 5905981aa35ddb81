#include "uprof/drain/bpf_ring_reader.h"

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace uprof {

Result<BpfRingReader> BpfRingReader::open(int map_fd) {
  bpf_map_info info{};
  uint32_t len = sizeof info;
  if (bpf_obj_get_info_by_fd(map_fd, &info, &len) != 0)
    return err("drain: BPF ring (map fd ", map_fd, "): reading its size: ", std::strerror(errno));
  if (info.type != BPF_MAP_TYPE_RINGBUF)
    return err("drain: BPF map fd ", map_fd, " is of type ", info.type, ", not a ring buffer");
  const uint64_t size = info.max_entries;
  if (size == 0 || (size & (size - 1)) != 0)
    return err("drain: BPF ring (map fd ", map_fd, "): ", size, " bytes, not a power of two");
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

  BpfRingReader r;
  void* c = ::mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
  if (c == MAP_FAILED) return err("drain: BPF ring: mapping its consumer page: ", std::strerror(errno));
  r.consumer_map_ = UniqueMmap(c, page);
  // The producer page, then the data twice (the kernel maps its pages twice in a row).
  const std::size_t data_len = page + 2 * size;
  void* d = ::mmap(nullptr, data_len, PROT_READ, MAP_SHARED, map_fd, static_cast<off_t>(page));
  if (d == MAP_FAILED)
    return err("drain: BPF ring: mapping its ", size / 1024, " KiB of data: ", std::strerror(errno));
  r.data_map_ = UniqueMmap(d, data_len);
  r.consumer_ = static_cast<uint64_t*>(c);
  r.producer_ = static_cast<const uint64_t*>(d);
  r.data_ = static_cast<const std::byte*>(d) + page;
  r.mask_ = size - 1;
  r.pos_ = r.end_ = r.released_ = load_acquire(r.consumer_);
  return r;
}

}  // namespace uprof
