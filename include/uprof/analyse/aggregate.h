// What `uprof report` shows, accumulated from the read-side loop's output as it
// streams (EventLoop: the filters have been applied, see event_loop.h): per
// function (optionally per process, per thread, and per value of one captured
// value, `--by ARG`): calls, latency statistics, unmatched entries by reason, and
// for each captured value its most frequent values and its min/max.
//
// Memory: one GroupStats per group, whose size depends on the range of latencies
// and the number of captured values, never on the number of calls. --by ARG over
// a high-cardinality value (a pointer) stops making new groups after
// `max_value_groups`; later values go to the group's "other" bucket.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "uprof/analyse/cpu_split.h"
#include "uprof/analyse/event_filter.h"
#include "uprof/analyse/event_loop.h"
#include "uprof/analyse/flat_index.h"
#include "uprof/analyse/latency_histogram.h"
#include "uprof/analyse/pairing.h"
#include "uprof/analyse/probe_functions.h"
#include "uprof/analyse/top_values.h"
#include "uprof/util/result.h"

namespace uprof {

// A raw 64-bit register or stack value as the declared type: an `int` argument in
// %edi leaves the upper half of %rdi undefined, so (size 4, signed)
// 0x00007f3a'fffffffe is -2, kept as the 64-bit pattern 0xffffffff'fffffffe.
uint64_t normalize_value(uint64_t raw, const ValueSpec& spec);

struct ValueStats {
  uint64_t count = 0;
  uint64_t min = 0;        // normalised bit patterns: compare and print as int64_t when is_signed
  uint64_t max = 0;
  bool is_signed = true;
  TopValues top{};

  void add(uint64_t normalized);
  void merge(const ValueStats& other);
};

// Goroutine: a Go function's calls by their goroutine: its id where the entry read it
// ($goid, kGoroutineIdValue), else its g (Call::goroutine); other calls by their process.
// Caller: by the function that called it (record -g): the Aggregator groups by call site
// (the stack's frame 0), and name_caller_groups (call_stacks.h) merges the sites of one
// caller once they are named; unmatched entries and calls without a stack have none.
enum class GroupBy : uint8_t { Function, Process, Thread, Goroutine, Caller };

struct AggregateOptions {
  GroupBy by = GroupBy::Function;
  std::string by_value{};                // a value name ("%di", "$retval", "len"); "" for none
  AggregateFilter filter{};              // the loop's: the Aggregator only reads --function from it
  uint64_t start_time = 0;             // RecordingMeta::start_monotonic_ns, for since/until
  std::optional<LinearSpec> linear{};    // also count a linear histogram per group
  uint32_t top_capacity = 32;          // Space-Saving counters per captured value
  uint32_t max_value_groups = 10'000;  // distinct --by values before "other"
  // --compensate: take the probes' own cost of a call (from `uprof bench`, stored by
  // record) off every duration, clamped at zero. build_report fills these from the
  // recording when `compensate` is set: compensate_by_function from each function's
  // probed instruction (RecordingMeta::probe_costs_ns), compensate_ns with the
  // smallest of them, used for a function that has no figure of its own.
  // With the file's per-hit costs (RecordingMeta::probe_hit_costs_ns), it also takes
  // off what the probe hits inside each call cost (Call::nested_probe_ns), and
  // build_report sets compensate_nested.
  bool compensate = false;
  uint64_t compensate_ns = 0;
  std::vector<uint64_t> compensate_by_function{};
  bool compensate_nested = false;

  uint64_t compensation_for(uint32_t function) const {
    return function < compensate_by_function.size() ? compensate_by_function[function] : compensate_ns;
  }
  // A call's duration as the report counts it: less the probes' cost with --compensate, at least 0.
  uint64_t duration_of(const Call& c) const {
    const uint64_t comp = compensate ? compensation_for(c.function) + c.nested_probe_ns : 0;
    return c.duration > comp ? c.duration - comp : 0;
  }
};

struct GroupStats {
  uint32_t function = 0;
  uint32_t pid = 0;                    // GroupBy::Process and ::Thread; 0 otherwise
  uint32_t tid = 0;                    // GroupBy::Thread; 0 otherwise
  uint64_t goroutine = 0;              // GroupBy::Goroutine: the goroutine's id, or its g (0: not Go code)
  bool goroutine_is_id = false;        // `goroutine` is the id ($goid), not g
  // GroupBy::Caller: the call site (frame 0 of the calls' stacks), and once named
  // (name_caller_groups), the function it is in; `has_caller` false: no stack.
  bool has_caller = false;
  StackFrame caller_site{};
  std::string caller{};
  std::string comm{};                  // by thread: the thread's name at its calls (a new name starts a new group); by process: the name of the first of its threads seen
  bool has_by_value = false;           // false: no --by, or the call did not capture it
  bool other_values = false;           // the values past max_value_groups
  uint64_t by_value = 0;               // normalised
  uint64_t calls = 0;                  // paired calls, and hits of probes that do not pair
  // USDT pairs: done probes whose start no probe reported (python 3.11 fires
  // function__entry only when a generator or coroutine starts, CPython gh-98894; or the
  // operation began before the recording). Each is a call, counted in `calls`, without a
  // latency; not unmatched.
  uint64_t untimed = 0;
  LatencyHistogram latency{};          // paired calls only
  std::optional<LinearHistogram> linear{};
  uint64_t nested_probe_ns = 0;        // what the probe hits inside its calls cost (Call::nested_probe_ns)
  // --compensate: calls it took more than their whole duration off (recorded as 0). Their
  // own time is below what can be told apart from the probes', whose cost varies by more.
  uint64_t below_compensation = 0;
  std::array<uint64_t, kUnmatchedReasons> unmatched{};
  std::vector<ValueStats> values{};    // one per FunctionInfo::values, same order
  CpuSplit cpu{};                      // record --off-cpu: on and off-CPU time of its calls

  uint64_t unmatched_total() const;
  // Entries and returns not paired because of a loss (PairingCounts::cut_by_loss).
  uint64_t cut_by_loss() const;
  // --compensate: whether percentile `percent` of `latency` falls among the calls it took
  // everything off (below_compensation, the smallest recorded): then it is no measurement,
  // and the report shows none (p50 of 100 calls with 60 such is; p99 is not).
  bool compensation_hides(double percent) const;
  // Adds `other`'s counts (its keys are not compared: merging is how totals are made).
  void merge(const GroupStats& other);
};

// Errors a user should see before a report: a --function glob that matches no probed
// function, a --by name no selected function captures, since >= until.
Status check_aggregate_options(const ProbeFunctions& functions, const AggregateOptions& options);

// GroupBy::Goroutine: a Go function's call's goroutine, by its id or its g.
struct GoroutineKey {
  uint64_t value = 0;  // 0: not a goroutine's
  bool is_id = false;
};

class Aggregator final : public EventSink {
 public:
  Aggregator(const ProbeFunctions& functions, AggregateOptions options);

  void on_call(const Call& call, std::string_view comm) override;
  void on_unmatched(const Unmatched& unmatched, std::string_view comm) override;
  void on_hit(const Hit& hit, std::string_view comm) override;

  // In order of first appearance; with GroupBy::Function and no --by, one per selected
  // function in table order, those never called included (a probe that never fired is news).
  const std::vector<GroupStats>& groups() const { return groups_; }
  // One per selected function, in table order: its groups merged (the --by-thread totals).
  std::vector<GroupStats> function_totals() const;
  bool selected(uint32_t function) const { return function < selected_.size() && selected_[function]; }

 private:
  // GroupBy::Goroutine: which goroutine a call of `function` is, from its entry's
  // values (the id) or its g.
  GoroutineKey goroutine_of(uint32_t function, uint64_t g, std::span<const uint64_t> entry_values,
                            uint32_t entry_missing) const;
  GroupStats& group(uint32_t function, uint32_t pid, uint32_t tid, std::optional<uint64_t> by_value,
                    std::string_view comm, GoroutineKey goroutine = {}, std::span<const StackFrame> stack = {});
  // GroupBy::Caller: a number for each call site (frame 0), from 1; 0 for no stack.
  uint32_t caller_id(std::span<const StackFrame> stack);
  // GroupBy::Goroutine: a number of its own for each (pid, goroutine), in order of first sight.
  uint32_t goroutine_id(uint32_t pid, GoroutineKey g);
  GroupStats make_group(uint32_t function) const;
  // GroupBy::Thread: the tid with the thread's generation above it. A thread that takes
  // a new name (exec, prctl) or whose tid another process reuses starts a new
  // generation, so its calls after that are a group of their own, with that name.
  uint32_t thread_id(uint32_t pid, uint32_t tid, std::string_view comm);
  // The function whose row `function`'s calls go to: the clone it joins (FunctionInfo::row), or itself.
  uint32_t row_of(uint32_t function) const;
  std::optional<uint64_t> by_value_of(uint32_t function, uint32_t probe, std::span<const uint64_t> values) const;
  // Values of `probe` of `function`, into the row `g` (of that function or the clone whose row it joins).
  void add_values(GroupStats& g, uint32_t function, uint32_t probe, std::span<const uint64_t> values,
                  uint32_t missing) const;

  std::vector<FunctionInfo> functions_;
  std::vector<uint32_t> entry_probe_of_;     // per function, kNoProbe when none
  std::vector<uint16_t> first_slot_of_probe_;
  std::vector<uint32_t> function_of_probe_;
  AggregateOptions options_;
  std::vector<bool> selected_;
  std::vector<int32_t> by_slot_;             // per function: index in values of --by, or -1
  std::vector<int32_t> by_return_slot_;      // per USDT pair: the closing half's slot of that name, or -1
  std::vector<int32_t> goid_slot_;           // per function: the entry's $goid slot, or -1
  bool keyed_ = false;                       // groups need a lookup (not one per function)

  std::vector<GroupStats> groups_;
  std::vector<uint32_t> group_of_function_;  // when !keyed_
  // Per function that joins another's row (a clone): for each of its value slots, the
  // row's slot of the same name and type, or -1 (none, or not captured there).
  std::vector<std::vector<int32_t>> slot_in_row_;
  FlatIndex group_index_;
  FlatIndex::Key last_key_{};
  uint32_t last_group_ = UINT32_MAX;
  uint32_t value_groups_ = 0;
  struct ThreadGeneration {
    uint32_t pid = 0;
    uint32_t generation = 0;
    std::string comm;
  };
  std::vector<ThreadGeneration> thread_generations_;
  FlatIndex thread_generation_index_;        // tid -> thread_generations_
  FlatIndex goroutine_index_;                // (pid, g) -> its number
  uint32_t goroutines_ = 0;
  FlatIndex caller_index_;                   // (object, offset) -> its number - 1
  uint32_t callers_ = 0;
};

}  // namespace uprof
