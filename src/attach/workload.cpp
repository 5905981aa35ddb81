#include "uprof/attach/workload.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "uprof/util/file_type.h"

namespace uprof {

int exec_failure_status(int errno_value) {
  return errno_value == ENOENT || errno_value == ENOTDIR ? 127 : 126;
}

namespace {
Error exec_error(const std::string& cmd, int errno_value, const char* what = nullptr) {
  Error e = err("workload: ", cmd, ": ", what ? what : std::strerror(errno_value));
  e.exit_status = exec_failure_status(errno_value);
  return e;
}
}  // namespace

Result<std::string> find_program(const std::string& cmd) {
  if (cmd.empty()) return exec_error(cmd, ENOENT, "empty command");
  auto runnable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (cmd.find('/') != std::string::npos) {
    struct stat st {};
    if (::stat(cmd.c_str(), &st) != 0) return exec_error(cmd, errno);
    if (S_ISDIR(st.st_mode)) return exec_error(cmd, EISDIR, "is a directory");
    // /dev/zero, a FIFO: named by type, as execve(2) would refuse them (EACCES, 126).
    if (!S_ISREG(st.st_mode)) {
      const std::string what = "is " + std::string(file_type_name(st.st_mode)) + ", not a program";
      return exec_error(cmd, EACCES, what.c_str());
    }
    if (::access(cmd.c_str(), X_OK) != 0) return exec_error(cmd, EACCES);
    return cmd;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string cand = (dir.empty() ? "." : dir) + "/" + cmd;
    if (runnable(cand)) return cand;
    start = end + 1;
  }
  return exec_error(cmd, ENOENT, "command not found in PATH");
}

Workload::Workload(Workload&& o) noexcept
    : argv0_(std::move(o.argv0_)),
      pid_(std::exchange(o.pid_, -1)),
      go_(std::move(o.go_)),
      exec_err_(std::move(o.exec_err_)),
      started_(o.started_),
      reaped_(o.reaped_),
      status_(o.status_),
      signal_(o.signal_) {}

Workload::~Workload() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    int st;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
  }
}

Result<Workload> Workload::spawn(const std::vector<std::string>& argv, bool adopt_orphans) {
  if (argv.empty()) return err("workload: no command given");
  if (adopt_orphans && ::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
    return err("workload: prctl(PR_SET_CHILD_SUBREAPER): ", std::strerror(errno));
  int go[2], ee[2];
  if (::pipe2(go, O_CLOEXEC) != 0 || ::pipe2(ee, O_CLOEXEC) != 0)
    return err("workload: pipe: ", std::strerror(errno));
  Workload w;
  w.argv0_ = argv[0];
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) return err("workload: fork: ", std::strerror(errno));
  if (pid == 0) {
    // Child: only async-signal-safe calls from here on.
    ::close(go[1]);
    ::close(ee[0]);
    char c;
    ssize_t n;
    while ((n = ::read(go[0], &c, 1)) < 0 && errno == EINTR) {
    }
    // One byte means "exec now". EOF without it: uprof gave up, or was killed,
    // before starting us; the command must not run unrecorded.
    if (n != 1) _exit(127);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    ::execvp(args[0], args.data());
    int e = errno;
    ssize_t ignored = ::write(ee[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  ::close(go[0]);
  ::close(ee[1]);
  w.pid_ = pid;
  w.go_.reset(go[1]);
  w.exec_err_.reset(ee[0]);
  return w;
}

Status Workload::start() {
  started_ = true;
  char go = 'g';
  ssize_t w;
  while ((w = ::write(go_.get(), &go, 1)) < 0 && errno == EINTR) {
  }
  go_.reset();
  if (w != 1) return err("workload: ", argv0_, ": cannot start it: ", std::strerror(errno));
  int e = 0;
  ssize_t n;
  while ((n = ::read(exec_err_.get(), &e, sizeof e)) < 0 && errno == EINTR) {
  }
  exec_err_.reset();
  if (n == static_cast<ssize_t>(sizeof e)) {
    (void)wait();  // reap it; the exec error is what matters
    return exec_error(argv0_, e);
  }
  return ok();
}

void Workload::reaped(int wait_status) {
  reaped_ = true;
  status_ = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
  signal_ = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
}

Result<int> Workload::wait() {
  if (reaped_) return status_;
  int st = 0;
  for (;;) {
    pid_t r = ::waitpid(pid_, &st, 0);
    if (r == pid_) break;
    if (r < 0 && errno == EINTR) continue;
    return err("workload: waitpid: ", std::strerror(errno));
  }
  reaped(st);
  return status_;
}

bool Workload::descendants_running() {
  // Peek (WNOWAIT) at one exited child at a time and reap it: the workload's status is
  // kept, an adopted orphan's is nobody's to report.
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == EINTR) continue;
      return false;  // ECHILD: no child left at all
    }
    if (info.si_pid == 0) return true;  // children, none of them exited
    int st = 0;
    pid_t r;
    while ((r = ::waitpid(info.si_pid, &st, 0)) < 0 && errno == EINTR) {
    }
    if (r == pid_) reaped(st);
  }
}

}  // namespace uprof
