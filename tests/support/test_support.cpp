#include "support/test_support.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "uprof/store/data_file.h"

namespace uprof::test {

std::string fixture(const std::string& arch, const std::string& name) {
  return std::string(UPROF_FIXTURES) + "/" + arch + "/" + name;
}

std::string uprof_binary() { return UPROF_BINARY; }

namespace {
std::string slurp(int fd) {
  std::string s;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    s.append(buf, static_cast<size_t>(n));
  }
  return s;
}
}  // namespace

CommandResult run(const std::vector<std::string>& argv) {
  TempDir tmp;
  std::string out_path = tmp.file("out"), err_path = tmp.file("err");
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(o, 1);
    dup2(e, 2);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  int o = open(out_path.c_str(), O_RDONLY);
  r.out = slurp(o);
  close(o);
  int e = open(err_path.c_str(), O_RDONLY);
  r.err = slurp(e);
  close(e);
  return r;
}

CommandResult run_shell(const std::string& cmdline) { return run({"/bin/sh", "-c", cmdline}); }

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "uprof-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

LoadedRecording load_recording(const std::string& path) {
  LoadedRecording r;
  auto f = DataFileReader::open(path);
  EXPECT_TRUE(f) << f.error().message;
  if (!f) return r;
  r.probes = f->probes();
  Event e;
  while (f->next(e)) {
    if (e.kind == EventKind::Sample) r.samples.push_back(e);
    if (e.kind == EventKind::Lost) r.losses.push_back(e);
  }
  r.trailer = f->trailer();
  r.problems = f->problems();
  return r;
}

bool wait_for_file(const std::string& path, double seconds) {
  for (int i = 0; i < static_cast<int>(seconds * 100) && !std::filesystem::exists(path); i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return std::filesystem::exists(path);
}

bool is_root() { return ::geteuid() == 0; }

bool have_uprobe_pmu() {
  struct stat st {};
  return ::stat(kUprobePmuDir, &st) == 0;
}

std::vector<SleepCall> sleep_calls(const std::string& data) {
  auto r = run({uprof_binary(), "script", data, "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  static const std::regex tid_re(R"("tid":([0-9]+))"), ms_re(R"("ms":([0-9]+))"), ns_re(R"("duration_ns":([0-9]+))");
  std::map<std::string, int64_t> asked;  // by tid: the ms of the open call
  std::vector<SleepCall> calls;
  std::istringstream lines(r.out);
  std::smatch tid, m;
  for (std::string line; std::getline(lines, line);) {
    if (line.find(R"("function":"slow_add")") == std::string::npos || !std::regex_search(line, tid, tid_re)) continue;
    if (line.find(R"("event":"entry")") != std::string::npos && std::regex_search(line, m, ms_re)) {
      asked[tid[1]] = std::stoll(m[1]);
    } else if (line.find(R"("event":"return")") != std::string::npos && std::regex_search(line, m, ns_re)) {
      calls.push_back({.ms = asked[tid[1]], .ns = std::stoull(m[1])});
    }
  }
  return calls;
}

}  // namespace uprof::test
