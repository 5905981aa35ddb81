#include "uprof/analyse/event_filter.h"

#include <fnmatch.h>

#include <algorithm>

namespace uprof {

bool glob_match(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

bool any_glob_match(const std::vector<std::string>& patterns, const std::string& text) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return glob_match(p, text); });
}

std::vector<bool> select_functions(const std::vector<FunctionInfo>& functions, const AggregateFilter& filter) {
  std::vector<bool> out(functions.size(), true);
  if (filter.functions.empty()) return out;
  for (std::size_t i = 0; i < functions.size(); ++i) out[i] = any_glob_match(filter.functions, functions[i].name);
  return out;
}

EventFilter::EventFilter(const ProbeFunctions& functions, AggregateFilter filter, uint64_t start_time)
    : filter_(std::move(filter)), selected_(select_functions(functions.functions, filter_)) {
  if (filter_.since) since_ = *filter_.since > UINT64_MAX - start_time ? UINT64_MAX : start_time + *filter_.since;
  if (filter_.until) until_ = *filter_.until > UINT64_MAX - start_time ? UINT64_MAX : start_time + *filter_.until;
}

bool EventFilter::comm_kept(uint32_t id, const ThreadNames& names) const {
  if (id != ThreadNames::kNoName && id >= comm_answer_.size()) comm_answer_.resize(names.distinct_names(), -1);
  int8_t& answer = id == ThreadNames::kNoName ? unnamed_answer_ : comm_answer_[id];
  if (answer < 0) answer = any_glob_match(filter_.comms, std::string(names.text(id))) ? 1 : 0;
  return answer == 1;
}

bool EventFilter::keeps(uint32_t pid, uint32_t tid, uint64_t time, const ThreadNames& names) const {
  const AggregateFilter& f = filter_;
  return time >= since_ && time < until_ &&
         (f.pids.empty() || std::find(f.pids.begin(), f.pids.end(), pid) != f.pids.end()) &&
         (f.tids.empty() || std::find(f.tids.begin(), f.tids.end(), tid) != f.tids.end()) &&
         (f.comms.empty() || comm_kept(names.name_id(pid, tid), names));
}

}  // namespace uprof
