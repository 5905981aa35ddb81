// The one filter of the read side (report and script): --pid --tid --comm
// --function --since --until. A call is judged by its entry (when it was entered,
// on which thread), an unmatched entry, a hit or a single sample by when its probe
// fired; the comm is the thread's name at the time the pairer reports it
// (ThreadNames: a forked child that has not exec'd yet has its parent's name).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "uprof/analyse/probe_functions.h"
#include "uprof/analyse/thread_names.h"

namespace uprof {

struct AggregateFilter {
  std::vector<uint32_t> pids{};          // empty: every process
  std::vector<uint32_t> tids{};          // empty: every thread
  std::vector<std::string> comms{};      // fnmatch(3) globs over the thread's name ("" unnamed); empty: all
  std::vector<std::string> functions{};  // fnmatch(3) globs over FunctionInfo::name; empty: all
  std::optional<uint64_t> since{};       // ns after the recording start: [since, until)
  std::optional<uint64_t> until{};
};

bool glob_match(const std::string& pattern, const std::string& text);
bool any_glob_match(const std::vector<std::string>& patterns, const std::string& text);
// Per function of `functions`: whether --function keeps it (all when it is empty).
std::vector<bool> select_functions(const std::vector<FunctionInfo>& functions, const AggregateFilter& filter);

class EventFilter {
 public:
  // `start_time`: RecordingMeta::start_monotonic_ns, what since/until count from.
  EventFilter(const ProbeFunctions& functions, AggregateFilter filter, uint64_t start_time);

  // --function: what is not selected is not shown at all (and not counted as filtered).
  bool selected(uint32_t function) const { return function < selected_.size() && selected_[function]; }
  // The pid, tid, comm and time-window parts.
  bool keeps(uint32_t pid, uint32_t tid, uint64_t time, const ThreadNames& names) const;

 private:
  bool comm_kept(uint32_t name_id, const ThreadNames& names) const;

  AggregateFilter filter_;
  std::vector<bool> selected_;
  uint64_t since_ = 0;                // absolute, on the event clock
  uint64_t until_ = UINT64_MAX;
  // Per ThreadNames id, the --comm answer once asked (-1: not yet): fnmatch per
  // event would cost more than the pairing.
  mutable std::vector<int8_t> comm_answer_;
  mutable int8_t unnamed_answer_ = -1;
};

}  // namespace uprof
