// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320): the checksum that
// .gnu_debuglink stores for its debug file.
#pragma once

#include <cstddef>
#include <cstdint>

namespace uprof {

// Continues a running CRC: crc32_update(0, data, n) for a fresh one.
uint32_t crc32_update(uint32_t crc, const void* data, std::size_t n);

}  // namespace uprof
