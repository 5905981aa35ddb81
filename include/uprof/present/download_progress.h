// What a debuginfod lookup shows on stderr: one line per download, never a flood.
//
// On a terminal the line is redrawn in place (at most every 100 ms) while the file comes,
//   uprof: debuginfod: funcs_stripped (build-id 3f2a9c81...): 1.2 MB of 4.5 MB from http://127.0.0.1:8002
// and replaced at the end by the outcome. Anywhere else (a log, a pipe) only the
// outcome is written, as one line:
//   uprof: debuginfod: downloaded the debug file of ./funcs_stripped (build-id 3f2a..., 40.1 kB) from http://127.0.0.1:8002
//   uprof: debuginfod: no debug file for ./funcs_stripped (build-id 3f2a...): connection refused by http://127.0.0.1:9; going on without it
// A file the client's cache already held prints nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "uprof/resolve/find/debuginfod.h"

namespace uprof {

// 40100 -> "40.1 kB", 900 -> "900 B", 4500000 -> "4.5 MB"
std::string human_bytes(uint64_t bytes);

// The in-place line while a download runs (no "\r", no newline).
std::string download_progress_text(const DebuginfodQuery& q, long done, long total, std::string_view server);
// The line a lookup ends with (no newline); "" when there is nothing to say (a cache hit).
std::string download_outcome_text(const DebuginfodQuery& q, const Result<DebuginfodFile>& outcome);

class DownloadProgress : public DebuginfodListener {
 public:
  using Write = std::function<void(std::string_view)>;
  using Now = std::function<uint64_t()>;  // nanoseconds, monotonic

  // `tty`: the output is a terminal, where the progress line is redrawn in place.
  DownloadProgress(bool tty, Write write, Now now);
  // On stderr, a terminal or not as isatty(2) says.
  static DownloadProgress on_stderr();

  void progress(const DebuginfodQuery& q, long done, long total, std::string_view server) override;
  void finished(const DebuginfodQuery& q, const Result<DebuginfodFile>& outcome) override;

 private:
  bool tty_;
  Write write_;
  Now now_;
  bool drawn_ = false;     // a progress line is on the screen
  std::string last_;       // its text
  uint64_t last_ns_ = 0;   // when it was drawn
};

}  // namespace uprof
