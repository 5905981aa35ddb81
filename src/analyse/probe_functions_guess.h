// What files older than format 1.6 do not say, guessed back from their names and flags:
// each probe's role and report row (model/recording.h RowRole), and which entry points
// are clones of one source function. group_probes (analyse/probe_functions.h) groups a
// 1.6 file by what the recorder wrote, an older one by these guesses.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "uprof/model/recording.h"

namespace uprof {

// A probe's role and row: as recorded (1.6), or as guessed for an older file.
struct ProbePlace {
  RowRole role = RowRole::Unrecorded;
  std::string row{};
};

// The name a probe's own row has: "add", "add+0x10", "./app:0x5000" for a raw offset
// outside every function (named with its file, as the spec named it).
std::string display_name(const ProbeInfo& p);

// By ProbeInfo::index (`slots` of them). What the flags of 1.0-1.5 allow:
//   USDT "python:gc__start" -> UsdtStart, row "python:gc" (by its name's suffix)
//   a site                  -> Inlined, row its name (1.5 does not tell a source line
//                              from an inlined copy; "lines.c:23" is no function's name,
//                              so it joins no function's row either way)
//   Exit                    -> Exit, row the function
//   Entry/Return at offset 0 -> Entry/Return; elsewhere Instruction ("add+0x10")
std::vector<ProbePlace> guess_places(std::span<const ProbeInfo> probes, uint32_t slots);

// Whether two symbols of one name are entry points of one source function: gcc's clone
// marks aside, the same symbol ("scale" and "scale.constprop.0", not two `static helper`s).
bool same_clone_family(std::string_view symbol, std::string_view other);

}  // namespace uprof
