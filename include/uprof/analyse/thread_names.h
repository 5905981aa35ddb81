// The name of each live thread while a recording is read, the way perf and
// bpftrace show it:
//   - what the thread's last Comm event said (exec, prctl(PR_SET_NAME));
//   - a task forked since, that has not exec'd yet, carries its parent's name: the
//     kernel copies the parent's comm in copy_process and no Comm event says so
//     (a server "nginx" that forks a worker: the worker is "nginx" too);
//   - a thread no event named has its process's name (threads that existed before
//     `record -p PID` attached get no Fork event).
// A thread's name is forgotten at its exit, so the table holds live threads only.
// Names are interned: a thousand threads of one program share one string, and a
// filter can remember its answer per name id instead of matching globs per event.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "uprof/analyse/flat_index.h"

namespace uprof {

class ThreadNames {
 public:
  static constexpr uint32_t kNoName = UINT32_MAX;

  void on_comm(uint32_t pid, uint32_t tid, std::string_view comm);
  void on_fork(uint32_t pid, uint32_t tid, uint32_t parent_pid, uint32_t parent_tid);
  void on_exit(uint32_t pid, uint32_t tid);

  // The thread's name, else its process's; kNoName when no event named either.
  uint32_t name_id(uint32_t pid, uint32_t tid) const;
  // "" for kNoName.
  std::string_view text(uint32_t id) const { return id < names_.size() ? std::string_view(names_[id]) : ""; }
  std::string_view name(uint32_t pid, uint32_t tid) const { return text(name_id(pid, tid)); }
  // Ids are below this.
  std::size_t distinct_names() const { return names_.size(); }

 private:
  struct Thread {
    uint32_t pid = 0;
    uint32_t name = kNoName;
  };
  uint32_t own_name(uint32_t pid, uint32_t tid) const;
  void set(uint32_t pid, uint32_t tid, uint32_t name);
  void forget(uint32_t tid);

  // One-entry cache of name_id(): events come in runs per thread, and the loop asks
  // for every call it hands on. Any change of the table clears it.
  mutable uint32_t last_pid_ = 0, last_tid_ = 0, last_id_ = kNoName;
  mutable bool last_valid_ = false;

  FlatIndex index_;                 // tid -> slot in threads_ (a tid names one live thread)
  std::vector<Thread> threads_;
  std::vector<uint32_t> free_;      // slots of exited threads, reused
  std::vector<std::string> names_;  // by id
  std::unordered_map<std::string, uint32_t> ids_;
};

}  // namespace uprof
