// How the perf engine reads a value in user memory (model/capture_plan.h's
// fetched_from_memory): as a tracefs fetch argument of the probe, whose bytes come
// in the sample's raw data (PERF_SAMPLE_RAW), where the event's format says.
//
//   %di:string on slot 0           -> s0=+0(%di):string
//   +0(+24(%di)):string on slot 1  -> s1=+0(+24(%di)):string
//   +32(%di) on slot 2             -> u2=+32(%di):u64 c2=+32(%di):string
//
// A numeric read that faults leaves no mark in its field (tracefs shows it as 0 on
// 6.18, which a real 0 also is; the kernel writes nothing there on a fault), so each
// has a companion string fetch of the same address ("c2"), whose length is 0 exactly
// when the address cannot be read, where a readable one has at least its NUL. Pure.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/attach/trace_format.h"
#include "uprof/model/capture_plan.h"
#include "uprof/util/result.h"

namespace uprof {

struct FetchArg {
  unsigned slot = 0;      // the value slot it fills
  std::string name{};     // "s0", "u2", "c2" (the check of u2)
  std::string expr{};     // "+32(%di):u64"
  bool string = false;
  bool check = false;     // the companion of a numeric read
};

// The fetch arguments of `probe`'s memory values; an Error names the value when
// tracefs cannot spell it.
Result<std::vector<FetchArg>> perf_fetch_args(const ProbeCapture& probe, const ArchInfo& arch);

// "s0=+0(%di):string u2=+32(%di):u64 ...": what follows the probe in uprobe_events.
std::string fetch_arg_definitions(std::span<const FetchArg> args);

// Where each fetched slot lies in a sample's raw data.
struct RawSlot {
  unsigned slot = 0;
  uint32_t offset = 0;        // of its field
  uint32_t size = 0;          // numeric: the field's bytes; a string: 4 (__data_loc)
  bool string = false;
  uint16_t string_max = 0;    // string: the most bytes kept
  int64_t check_offset = -1;  // numeric: the __data_loc of its check, -1 when none
};

// Matches the args to the event's fields (attach/trace_format.h); an Error when the
// kernel's format lacks one.
Result<std::vector<RawSlot>> raw_layout(std::span<const FetchArg> args, std::span<const TraceField> fields,
                                        const ProbeCapture& probe);

// Fills e's fetched slots from a sample's raw data: numbers into values, strings into
// e.text (model/string_value.h); a slot that could not be read is marked missing.
void apply_raw(std::span<const RawSlot> layout, std::span<const std::byte> raw, Event& e);

}  // namespace uprof
