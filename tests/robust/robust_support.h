// Helpers for the robustness tests: run uprof as a child whose pid the test
// knows (to look for its tracefs group) with limits or a user set in the child
// only, and read back what the user would check.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.h"
#include "uprof/store/data_file.h"

namespace uprof::robust {

inline std::string slurp_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// A child process running `argv`, stdout and stderr into files of its own.
class Child {
 public:
  struct Options {
    std::function<void()> in_child{};           // before exec: setrlimit, ...
    std::vector<std::string> env{};             // "NAME=VALUE" added to the environment
  };
  Child(const std::vector<std::string>& argv, const Options& opts) {
    std::string out = dir_.file("out"), errf = dir_.file("err");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);  // Ctrl-C tests signal uprof alone, not the test
      int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int e = ::open(errf.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int in = ::open("/dev/null", O_RDONLY);
      ::dup2(o, 1);
      ::dup2(e, 2);
      ::dup2(in, 0);
      for (const auto& kv : opts.env) ::putenv(const_cast<char*>(kv.c_str()));
      if (opts.in_child) opts.in_child();
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      _exit(127);
    }
    // Files written by a child running as another user must be readable and
    // writable by it: the directory is the test's, the files are opened above.
  }
  explicit Child(const std::vector<std::string>& argv) : Child(argv, Options{}) {}
  ~Child() {
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      wait();
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  // Shell-style status: 128 + signal when killed.
  int wait() {
    if (!waited_) {
      int st = 0;
      while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
      }
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      waited_ = true;
    }
    return status_;
  }
  // The status if it ended within `timeout`, nullopt otherwise.
  std::optional<int> wait_for(std::chrono::milliseconds timeout) {
    auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      int st = 0;
      pid_t r = ::waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        waited_ = true;
        return status_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::nullopt;
  }
  std::string out() const { return slurp_file(dir_.file("out")); }
  std::string err() const { return slurp_file(dir_.file("err")); }

 private:
  test::TempDir dir_;
  pid_t pid_ = -1;
  bool waited_ = false;
  int status_ = -1;
};

// Runs `argv` to the end; the pid is kept so that its tracefs group can be looked for.
struct Finished {
  pid_t pid = -1;
  int exit_code = -1;
  std::string out, err;
};
inline Finished run_child(const std::vector<std::string>& argv, const Child::Options& opts = {}) {
  Child c(argv, opts);
  Finished f;
  f.pid = c.pid();
  f.exit_code = c.wait();
  f.out = c.out();
  f.err = c.err();
  return f;
}

// The lines of uprof's stderr that are not notes: about other uprofs' leftovers
// (a test running beside ours may have left some that this uprof removed), or
// about how each probed function's first instruction is handled.
inline std::vector<std::string> error_lines(const std::string& err) {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string l; std::getline(in, l);)
    if (l.find("left by a uprof that is gone") == std::string::npos && !l.starts_with("uprof: first instructions:"))
      lines.push_back(l);
  return lines;
}

inline std::string tracefs_events_path() {
  for (const char* d : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
    if (std::filesystem::exists(std::string(d) + "/uprobe_events")) return std::string(d) + "/uprobe_events";
  return "";
}

// Every event of group uprof_<pid> still defined in tracefs: "p:uprof_42/e0 ...".
inline std::vector<std::string> tracefs_lines_of(pid_t uprof_pid) {
  std::vector<std::string> lines;
  std::string path = tracefs_events_path();
  if (path.empty()) return lines;
  std::istringstream in(slurp_file(path));
  std::string needle = ":uprof_" + std::to_string(uprof_pid) + "/";
  for (std::string l; std::getline(in, l);)
    if (l.find(needle) != std::string::npos) lines.push_back(l);
  return lines;
}

using Loaded = test::LoadedRecording;
inline Loaded load_data(const std::string& path) { return test::load_recording(path); }

// A pid that no process has: one of ours, already reaped.
inline pid_t dead_pid() {
  pid_t p = ::fork();
  if (p == 0) _exit(0);
  ::waitpid(p, nullptr, 0);
  return p;
}

}  // namespace uprof::robust
