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
  // The signal that killed it, 0 if it exited (valid after wait()).
  int term_signal() const { return signal_; }

 private:
  Workload() = default;
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
