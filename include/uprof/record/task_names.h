// Names for the threads a recording meets that no event named. With `record -a` or
// `-p PID`, a process that was running before the recording started brings no fork,
// exec or prctl event, and its calls would show a bare pid ("__getpid [pid 4233]").
// The first event of such a thread is preceded by a Comm event that says what
// /proc/PID/task/TID/comm says at that moment, as perf's synthesized COMM records do.
//
//   Sample pid 4233 tid 4233   -> Comm 4233/4233 "systemd-journal", then the Sample
//   Fork   pid 900 tid 901     -> nothing: the new thread carries its parent's name
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_set>

#include "uprof/model/recording.h"

namespace uprof {

// /proc/PID/task/TID/comm, or nothing once the thread is gone.
std::optional<std::string> read_task_comm(uint32_t pid, uint32_t tid);

class TaskNames {
 public:
  using ReadComm = std::function<std::optional<std::string>(uint32_t pid, uint32_t tid)>;
  explicit TaskNames(ReadComm read = read_task_comm) : read_(std::move(read)) {}

  // The Comm event to write just before `e`, when `e` is the first event of a thread
  // that nothing named; remembers what each event says about names.
  std::optional<Event> before(const Event& e);

 private:
  ReadComm read_;
  std::unordered_set<uint32_t> known_;  // tids a Comm or Fork event named (or a read tried)
  uint32_t last_ = 0;                   // the last tid asked about: events come in runs per thread
};

}  // namespace uprof
