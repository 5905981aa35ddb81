// The layout of a tracefs event's record, from its `format` file, which names each
// field with its offset and size in the record (the raw data of a PERF_SAMPLE_RAW):
//
//   name: e3
//   ID: 1742
//   format:
//   	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
//   	...
//   	field:unsigned long __probe_ip;	offset:8;	size:8;	signed:0;
//   	field:u32 u2;	offset:16;	size:4;	signed:0;
//   	field:__data_loc char[] s0;	offset:20;	size:4;	signed:1;
//
// A __data_loc field holds where its bytes are: (length << 16) | offset in the record.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "uprof/util/result.h"

namespace uprof {

struct TraceField {
  std::string name{};
  uint32_t offset = 0;
  uint32_t size = 0;
  bool data_loc = false;  // __data_loc: a u32 saying where the bytes are
  bool operator==(const TraceField&) const = default;
};

// Pure: the fields of a format file's text; `where` names it in errors.
Result<std::vector<TraceField>> parse_trace_format(std::string_view text, std::string_view where);
// Reads and parses tracefs_dir/events/GROUP/NAME/format.
Result<std::vector<TraceField>> read_trace_format(const std::string& path);

}  // namespace uprof
