// What the data-file fuzzers share: fuzz bytes as a file the reader can open by path,
// and the same bytes with every section's CRC made right.
//
// Every section carries a CRC, so almost every mutation would only reach "CRC
// mismatch". The fuzzers therefore read each input twice: as it is (the CRC and
// framing paths), and with the CRC of every whole section recomputed (the payload
// decoders and what comes after them).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "uprof/store/data_file.h"
#include "uprof/util/crc32.h"

namespace uprof::fuzz {

// Writes the bytes to a memfd (one per process, rewritten for each input) and returns
// a path that opens it: /proc/self/fd/N.
inline std::string as_file(const uint8_t* p, std::size_t n) {
  static int fd = [] {
    int f = ::memfd_create("uprof_fuzz.data", MFD_CLOEXEC);
    if (f < 0) std::abort();
    return f;
  }();
  if (::ftruncate(fd, 0) != 0) std::abort();
  off_t off = 0;
  while (n) {
    ssize_t w = ::pwrite(fd, p, n, off);
    if (w <= 0) std::abort();
    p += w;
    n -= static_cast<std::size_t>(w);
    off += w;
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

// Walks the sections as data_file.h lays them out and stores each whole one's CRC.
// Empty when that changes nothing (no section, or every CRC already right).
inline std::vector<uint8_t> with_valid_crcs(const uint8_t* data, std::size_t size) {
  std::vector<uint8_t> out(data, data + size);
  bool changed = false;
  std::size_t at = kHeaderSize;
  while (at <= out.size() && out.size() - at >= kSectionHeaderSize) {
    uint64_t n;
    std::memcpy(&n, out.data() + at + 8, sizeof n);
    std::size_t payload = at + kSectionHeaderSize;
    if (n > out.size() - payload) break;
    uint32_t crc = crc32_update(0, out.data() + payload, static_cast<std::size_t>(n));
    if (std::memcmp(out.data() + at + 4, &crc, sizeof crc) != 0) {
      std::memcpy(out.data() + at + 4, &crc, sizeof crc);
      changed = true;
    }
    at = payload + static_cast<std::size_t>(n);
  }
  if (!changed) out.clear();
  return out;
}

}  // namespace uprof::fuzz
