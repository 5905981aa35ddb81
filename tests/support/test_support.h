// Helpers shared by the tests: where the fixtures are, running a command and
// capturing its output, and a temporary directory removed at scope exit.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "uprof/store/recording.h"

namespace uprof::test {

// Path of a fixture built by tests/fixtures: fixture("x86_64", "funcs_O2_pie").
std::string fixture(const std::string& arch, const std::string& name);
// Path of the uprof binary built by this build.
std::string uprof_binary();

struct CommandResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;     // stdout
  std::string err;     // stderr
};
// Runs `argv` (no shell), capturing stdout and stderr.
CommandResult run(const std::vector<std::string>& argv);
// Runs a shell command line, capturing stdout and stderr.
CommandResult run_shell(const std::string& cmdline);

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A data file read whole: its probes, its samples, the trailer, what the reader
// found wrong. A file that does not open fails the test (EXPECT) and reads empty.
struct LoadedRecording {
  std::vector<ProbeInfo> probes;
  std::vector<Event> samples;
  std::optional<Trailer> trailer;
  std::vector<std::string> problems;
};
LoadedRecording load_recording(const std::string& path);

// Waits up to `seconds` for a file to appear (a workload's pid file).
bool wait_for_file(const std::string& path, double seconds = 5);

}  // namespace uprof::test
