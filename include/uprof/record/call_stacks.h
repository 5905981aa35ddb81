// record -g: which probes carry the call stack, and how each hit gets it. Pure.
//
//   -e work -g                   work (entry): Always    work%return: None (the call has its entry's stack)
//   -e work%return -g            work%return: Always     (no entry to take it at)
//   -e work -g --stack-min 1ms   work (entry): EntryTime work%return (or each exit): IfLong
//   -e lines.c:23 -g             lines.c:23: Always      (a point of code: its callers)
#pragma once

#include <string>
#include <vector>

#include "uprof/model/capture_plan.h"
#include "uprof/model/recording.h"
#include "uprof/util/result.h"

namespace uprof {

// Sets ProbeInfo::stack and ProbeCapture::stack of each probe (the two vectors are in
// table order) and capture.call_graph; returns lines for the user (functions whose calls
// get no stack, and why). Does nothing when `call_graph.on` is false.
std::vector<std::string> plan_call_stacks(std::vector<ProbeInfo>& probes, CapturePlan& capture,
                                          const CallGraphPlan& call_graph);

// --call-graph's text, as perf spells it: "dwarf", "dwarf,16384" (the stack bytes to copy,
// a multiple of 8 up to 65528), "fp". An error names what is wrong.
Result<CallGraphPlan> parse_call_graph(const std::string& text);

}  // namespace uprof
