#include "uprof/analyse/event_loop.h"

namespace uprof {

EventLoop::EventLoop(const ProbeFunctions& functions, const AggregateFilter& filter, uint64_t start_time,
                     EventSink& sink, std::span<const uint64_t> hit_cost_ns)
    : functions_(functions), pairer_(functions, hit_cost_ns), filter_(functions, filter, start_time), sink_(sink) {}

bool EventLoop::admit(uint32_t function, uint32_t pid, uint32_t tid, uint64_t time) {
  if (!filter_.selected(function)) return false;
  const bool kept = filter_.keeps(pid, tid, time, names_);
  filtered_out_ += !kept;
  return kept;
}

void EventLoop::on_call(const Call& c) {
  closed_duration_ = c.duration;
  if (admit(c.function, c.pid, c.tid, c.entry_time)) sink_.on_call(c, names_.name(c.pid, c.tid));
}

void EventLoop::on_unmatched(const Unmatched& u) {
  if (admit(u.function, u.pid, u.tid, u.time)) sink_.on_unmatched(u, names_.name(u.pid, u.tid));
}

void EventLoop::on_hit(const Hit& h) {
  if (admit(h.function, h.pid, h.tid, h.time)) sink_.on_hit(h, names_.name(h.pid, h.tid));
}

void EventLoop::on_fork(uint32_t pid, uint32_t tid, uint32_t parent_pid, uint32_t parent_tid) {
  names_.on_fork(pid, tid, parent_pid, parent_tid);
}

// After the pairer reported the thread's open calls, so that they are judged by its name.
void EventLoop::on_exit(uint32_t pid, uint32_t tid) { names_.on_exit(pid, tid); }

void EventLoop::add(const Event& e) {
  // A Comm event names its thread before anything else looks at it.
  if (e.kind == EventKind::Comm) names_.on_comm(e.pid, e.tid, e.comm);
  if (e.kind == EventKind::Sample || e.kind == EventKind::Comm)
    sink_.on_thread(e.pid, e.tid, names_.name(e.pid, e.tid));
  closed_duration_.reset();
  if (e.time > now_) now_ = e.time;
  pairer_.add(e, *this);
  sink_.on_paired();
  if (e.kind == EventKind::Sample && functions_.role(e.probe) != ProbeRole::Unknown) {
    const uint32_t fn = functions_.function_of_probe[e.probe];
    if (filter_.selected(fn) && filter_.keeps(e.pid, e.tid, e.time, names_))
      sink_.on_sample(e, fn, closed_duration_, names_.name(e.pid, e.tid));
  } else if (e.kind == EventKind::Lost) {
    sink_.on_lost(e);
  }
}

void EventLoop::finish() {
  pairer_.finish(*this);
  sink_.on_paired();
}

ReadCounts read_events(DataFileReader& reader, EventLoop& loop) {
  ReadCounts n;
  Event e;
  while (reader.next(e)) {
    n.events++;
    if (e.kind == EventKind::Sample) {
      n.samples++;
      if (!n.first_time) n.first_time = e.time;
      n.last_time = e.time;
    } else if (e.kind == EventKind::Lost) {
      n.lost += e.lost;
    }
    loop.add(e);
  }
  loop.finish();
  return n;
}

}  // namespace uprof
