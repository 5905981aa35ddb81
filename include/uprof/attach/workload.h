// The program uprof records: forked stopped, so that the probes can be opened
// before it runs a single instruction of its own, then released to exec.
//
//   spawn():  fork; the child blocks reading a pipe
//   (caller opens perf events on child pid with enable_on_exec)
//   start():  write one byte down the pipe; the child execs; an exec failure comes
//             back through a CLOEXEC pipe as the errno, so "no such file" is an error
//             (whose exit_status is 127, or 126 when the file cannot be executed).
//             A child that sees EOF without the byte (uprof died first) exits
//             without running the command.
//   wait():   the exit status, 128 + signal when killed (as a shell reports it)
//
// With `adopt_orphans`, uprof is the workload's child subreaper (PR_SET_CHILD_SUBREAPER):
// a process the workload starts and leaves behind (daemon(), `cmd &` in a script) is
// re-parented to uprof instead of init, so uprof can tell when the last one has exited
// (descendants_running()) and reaps them. They see uprof as their parent (getppid).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "uprof/util/result.h"
#include "uprof/util/unique_fd.h"

namespace uprof {

// The path execvp would run for `cmd` (PATH search when it has no '/'). Errors
// carry the shell's exit status (127 not found, 126 not executable).
Result<std::string> find_program(const std::string& cmd);

// A shell's exit status for a command that failed to exec with `errno_value`:
// 127 when it does not exist (ENOENT, ENOTDIR), 126 otherwise (EACCES, ENOEXEC...).
int exec_failure_status(int errno_value);

class Workload {
 public:
  static Result<Workload> spawn(const std::vector<std::string>& argv, bool adopt_orphans = false);
  Workload(Workload&& o) noexcept;
  Workload& operator=(Workload&&) = delete;
  Workload(const Workload&) = delete;
  ~Workload();  // a child never started, or not waited for, is killed and reaped

  pid_t pid() const { return pid_; }
  Status start();
  // Blocks until the workload exits; returns its shell-style exit status.
  Result<int> wait();
  bool exited() const { return reaped_; }
  // The signal that killed it, 0 if it exited (valid after wait()).
  int term_signal() const { return signal_; }
  // Whether a process the workload started is still running: the workload itself, or an
  // orphan of it adopted by uprof (spawn with adopt_orphans). Reaps those that exited,
  // the workload's own status kept for wait(). Never blocks.
  bool descendants_running();

 private:
  Workload() = default;
  void reaped(int wait_status);
  std::string argv0_;
  pid_t pid_ = -1;
  UniqueFd go_;       // write end: closing it lets the child exec
  UniqueFd exec_err_; // read end: errno of a failed exec, EOF on success
  bool started_ = false;
  bool reaped_ = false;
  int status_ = 0;
  int signal_ = 0;
};

}  // namespace uprof
