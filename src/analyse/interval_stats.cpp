#include "uprof/analyse/interval_stats.h"

namespace uprof {

IntervalStats::IntervalStats(std::span<const ProbeInfo> probes, uint64_t start)
    : functions_(group_probes(probes)), pairer_(functions_) {
  block_.index = 1;
  block_.begin = start;
  block_.functions.resize(functions_.functions.size());
}

void IntervalStats::add(const Event& e) {
  if (e.kind == EventKind::Sample) ++block_.samples;
  else if (e.kind == EventKind::Lost) block_.lost += e.lost;
  pairer_.add(e, *this);
}

IntervalBlock IntervalStats::cut(uint64_t now) {
  IntervalBlock done = std::move(block_);
  done.end = now;
  block_ = IntervalBlock{.index = done.index + 1, .begin = now, .end = 0, .samples = 0, .lost = 0, .functions = {}};
  block_.functions.resize(functions_.functions.size());
  return done;
}

void IntervalStats::finish() { pairer_.finish(*this); }

void IntervalStats::on_call(const Call& c) {
  IntervalFunction& f = block_.functions[c.function];
  ++f.calls;
  f.latency.record(c.duration);
}

void IntervalStats::on_unmatched(const Unmatched& u) {
  // As in the report (aggregate.h, GroupStats::untimed): a USDT pair's done probe without
  // its start is a call without a latency.
  const bool untimed = u.reason == UnmatchedReason::ReturnWithoutEntry && u.function < functions_.functions.size() &&
                       functions_.functions[u.function].usdt;
  ++(untimed ? block_.functions[u.function].calls : block_.functions[u.function].unmatched);
}

void IntervalStats::on_hit(const Hit& h) { ++block_.functions[h.function].calls; }

}  // namespace uprof
