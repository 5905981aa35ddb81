#include "uprof/record/task_names.h"

#include "uprof/util/text_file.h"

namespace uprof {

std::optional<std::string> read_task_comm(uint32_t pid, uint32_t tid) {
  std::string name = read_first_line("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  if (name.empty()) return std::nullopt;
  return name;
}

std::optional<Event> TaskNames::before(const Event& e) {
  switch (e.kind) {
    case EventKind::Comm:
    case EventKind::Fork:
      known_.insert(e.tid);
      return std::nullopt;
    case EventKind::Exit:
      known_.erase(e.tid);  // the tid may come back as another thread
      if (last_ == e.tid) last_ = 0;
      return std::nullopt;
    case EventKind::Sample:
      break;
    default:
      return std::nullopt;
  }
  if (e.tid == 0 || e.tid == last_) return std::nullopt;
  last_ = e.tid;
  if (!known_.insert(e.tid).second) return std::nullopt;
  std::optional<std::string> name = read_(e.pid, e.tid);
  if (!name) return std::nullopt;  // gone already: the report shows its pid
  Event comm;
  comm.kind = EventKind::Comm;
  comm.pid = e.pid;
  comm.tid = e.tid;
  comm.time = e.time;
  comm.comm = std::move(*name);
  return comm;
}

}  // namespace uprof
