// record -g: the calls of each function by who called them, for the report's callers,
// --format folded and pprof, and the HTML flame graph. The pass keeps the stacks as the
// file has them (frames of file offsets, call_stacks keyed by their bytes), each distinct
// stack once with its sums, and a latency histogram per call site; names come at the end
// (frame_symbols.h), once per distinct frame, and stacks and sites that name alike merge:
//
//   work <- [why_slow+0x11c3, why_slow+0x1270, libc.so.6+0x271ca, ...]   1,000 calls
//   work <- [why_slow+0x11c3, why_slow+0x1274, ...]                          (another call of spinner)
//     -> stack {__libc_start_call_main, main, spinner}, caller "spinner": both merged
//
// A call without a stack (an unwinding that failed, or one shorter than -g --stack-min)
// counts for the caller "[no stack]" and the stack {"[no stack]"}: the sums of a function's
// stacks are its calls and its latency. Memory: one entry per distinct stack up to
// `max_stacks`; past that, a stack not seen before goes to its function's
// {"[more stacks than kept]"}, which the report says.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "uprof/analyse/aggregate.h"
#include "uprof/analyse/cpu_split.h"
#include "uprof/analyse/frame_symbols.h"
#include "uprof/analyse/latency_histogram.h"
#include "uprof/analyse/pairing.h"

namespace uprof {

inline constexpr const char* kNoStack = "[no stack]";
inline constexpr const char* kMoreStacks = "[more stacks than kept]";

// What a stack's (or a caller's) calls add up to.
struct StackWeights {
  uint64_t calls = 0;
  uint64_t latency_ns = 0;  // the sum of their durations as the report counts them
  CpuSplit cpu{};           // record --off-cpu

  void add(uint64_t duration, const Call& c);
  void merge(const StackWeights& o);
};

// What a stack's value is in --format folded and a flame graph (--weight): its calls,
// their latency (the default), or the on-CPU or off-CPU part of it (record --off-cpu).
enum class StackWeight : uint8_t { Calls, Latency, OnCpu, OffCpu };
// "calls", "latency", "on-cpu", "off-cpu"
std::string_view to_string(StackWeight w);
Result<StackWeight> parse_stack_weight(std::string_view s);
uint64_t weight_of(const StackWeights& w, StackWeight which);

struct NamedStack {
  uint32_t function = 0;              // the probed function (ProbeFunctions index, its row's)
  // Its callers by name, outermost first, down to the caller: {"_start", ..., "main",
  // "spinner"}; each frame gives its inlined functions too (outer before inner).
  std::vector<std::string> frames;
  StackWeights w{};
};

struct CallerStats {
  uint32_t function = 0;
  std::string caller;                 // the function the calls came from, kNoStack
  LatencyHistogram latency{};
  StackWeights w{};
};

struct CallStacks {
  std::vector<NamedStack> stacks;     // by function (table order), then latency, most first
  std::vector<CallerStats> callers;   // the same order
  uint64_t calls = 0;
  uint64_t without_stack = 0;         // calls of functions whose probes carry stacks, that had none
  uint64_t over_limit = 0;            // calls whose stack went to kMoreStacks
  std::vector<std::string> problems;  // the files frames could not be named from (FrameSymbolizer)

  // Callers of `function`, most latency first (indices into `callers`).
  std::vector<std::size_t> callers_of(uint32_t function) const;
};

class StackCollector {
 public:
  explicit StackCollector(std::size_t max_stacks = 200'000) : max_stacks_(max_stacks) {}
  // `function`: the report row the call counts in; `duration`: as the report counts it.
  void add(uint32_t function, const Call& c, uint64_t duration);
  // Names every stack and call site, and merges those that name alike.
  CallStacks finish(FrameSymbolizer& names) const;

 private:
  struct Raw {
    uint32_t function = 0;
    std::vector<StackFrame> frames;
    StackWeights w{};
  };
  struct Site {
    uint32_t function = 0;
    bool has_frame = false;
    StackFrame frame{};
    LatencyHistogram latency{};
    StackWeights w{};
  };
  std::size_t max_stacks_;
  std::unordered_map<std::string, Raw> stacks_;
  std::unordered_map<std::string, Site> sites_;
  std::string key_;  // reused
  uint64_t calls_ = 0, without_stack_ = 0, over_limit_ = 0;
};

// GroupBy::Caller: names each group's call site (GroupStats::caller) and merges the
// groups of one function and caller, keeping the order of first appearance.
void name_caller_groups(std::vector<GroupStats>& groups, FrameSymbolizer& names);

}  // namespace uprof
