// The kernel's dynamic uprobe PMU, as sysfs describes it:
//
//   /sys/bus/event_source/devices/uprobe/type                  "8"
//   /sys/bus/event_source/devices/uprobe/format/retprobe       "config:0"
//   /sys/bus/event_source/devices/uprobe/format/ref_ctr_offset "config:32-63"
//
// The type number and the bit positions are the kernel's to choose (the type is 7
// on our arm64 guest), so they are read, never hard-coded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "uprof/util/result.h"

namespace uprof {

// One field of a perf_event_attr config word, from a sysfs "format" file.
struct ConfigField {
  uint8_t word = 0;  // 0 = config, 1 = config1, 2 = config2
  uint8_t lo = 0;    // first bit
  uint8_t hi = 0;    // last bit (inclusive)

  unsigned width() const { return hi - lo + 1u; }
  uint64_t max_value() const { return width() >= 64 ? ~0ull : (1ull << width()) - 1; }
  bool fits(uint64_t v) const { return v <= max_value(); }
  // `v` shifted into place; bits that do not fit are dropped (check fits() first).
  uint64_t place(uint64_t v) const { return (v & max_value()) << lo; }
};

// Parses "config:0", "config:32-63", "config1:0-31" (a trailing newline is fine).
// Lists of ranges ("config:0-7,32-35") are refused: no uprobe field uses them.
Result<ConfigField> parse_format_field(std::string_view text);

struct UprobePmu {
  uint32_t type = 0;
  ConfigField retprobe;
  // Absent before Linux 4.20 (no SDT semaphore support).
  std::optional<ConfigField> ref_ctr_offset;
};

inline constexpr const char* kUprobePmuDir = "/sys/bus/event_source/devices/uprobe";

// kUprobePmuDir, or the same path under $UPROF_SYSFS_ROOT when that is set
// ("/tmp/fakesys" -> "/tmp/fakesys/bus/event_source/devices/uprobe"): a way to
// see what uprof says on a kernel without the PMU.
std::string uprobe_pmu_dir();

// Reads `sysfs_dir`/type and its format files. A missing directory is an error
// that says which kernel options are needed.
Result<UprobePmu> read_uprobe_pmu(const std::string& sysfs_dir = kUprobePmuDir);

}  // namespace uprof
