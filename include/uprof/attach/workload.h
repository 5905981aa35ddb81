// The program uprof records: forked stopped, so that the probes can be opened
// before it runs a single instruction of its own, then released to exec.
//
//   spawn():  fork; the child blocks reading a pipe
//   (caller opens perf events on child pid with enable_on_exec)
//   start():  close the pipe; the child execs; an exec failure comes back through a
//             CLOEXEC pipe as the errno, so "no such file" is an error, not a silent 127
//   wait():   the exit status, 128 + signal when killed (as a shell reports it)
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "uprof/util/result.h"
#include "uprof/util/unique_fd.h"

namespace uprof {

// The path execvp would run for `cmd` (PATH search when it has no '/').
Result<std::string> find_program(const std::string& cmd);

class Workload {
 public:
  static Result<Workload> spawn(const std::vector<std::string>& argv);
  Workload(Workload&& o) noexcept;
  Workload& operator=(Workload&&) = delete;
  Workload(const Workload&) = delete;
  ~Workload();  // a child never started, or not waited for, is killed and reaped

  pid_t pid() const { return pid_; }
  Status start();
  // Blocks until the workload exits; returns its shell-style exit status.
  Result<int> wait();
  bool exited() const { return reaped_; }

 private:
  Workload() = default;
  std::string argv0_;
  pid_t pid_ = -1;
  UniqueFd go_;       // write end: closing it lets the child exec
  UniqueFd exec_err_; // read end: errno of a failed exec, EOF on success
  bool started_ = false;
  bool reaped_ = false;
  int status_ = 0;
};

}  // namespace uprof
