#include "uprof/drain/event_order.h"

namespace uprof {

void EventOrderer::push(Event e) {
  if (e.time < last_emitted_) late_++;
  heap_.push({std::move(e), seq_++});
}

void EventOrderer::pass_started(uint64_t now) {
  prev_pass_start_ = cur_pass_start_;
  cur_pass_start_ = now;
}

Status EventOrderer::emit_before(uint64_t limit, const Sink& sink) {
  while (!heap_.empty() && heap_.top().event.time < limit) {
    UPROF_TRY(sink(heap_.top().event));
    last_emitted_ = heap_.top().event.time;
    heap_.pop();
  }
  return ok();
}

Status EventOrderer::pass_ended(const Sink& sink) { return emit_before(prev_pass_start_, sink); }

Status EventOrderer::flush_all(const Sink& sink) { return emit_before(UINT64_MAX, sink); }

}  // namespace uprof
