#include "uprof/present/download_progress.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iterator>

#include "uprof/util/clock.h"

namespace uprof {
namespace {

constexpr uint64_t kRedrawNs = 100'000'000;  // a terminal line redrawn at most 10 times a second
constexpr const char* kClearLine = "\r\033[K";

std::string short_id(const std::string& id) { return id.size() > 8 ? id.substr(0, 8) + "..." : id; }

}  // namespace

std::string human_bytes(uint64_t bytes) {
  if (bytes < 1000) return std::to_string(bytes) + " B";
  static constexpr const char* kUnits[] = {"kB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes) / 1000;
  std::size_t u = 0;
  while (v >= 999.95 && u + 1 < std::size(kUnits)) {
    v /= 1000;
    ++u;
  }
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %s", v, kUnits[u]);
  return b;
}

std::string download_progress_text(const DebuginfodQuery& q, long done, long total, std::string_view server) {
  std::string s = "uprof: debuginfod: " + std::filesystem::path(q.binary).filename().string() + " (build-id " +
                  short_id(q.build_id) + "): ";
  if (server.empty()) return s + "asking " + debuginfod_urls();
  s += human_bytes(done > 0 ? static_cast<uint64_t>(done) : 0);
  if (total > 0) s += " of " + human_bytes(static_cast<uint64_t>(total));
  return s + " from " + std::string(server);
}

std::string download_outcome_text(const DebuginfodQuery& q, const Result<DebuginfodFile>& outcome) {
  if (!outcome) return "uprof: " + outcome.error().message + "; going on without it";
  if (outcome->server.empty()) return "";
  return "uprof: debuginfod: downloaded the debug file of " + q.binary + " (build-id " + q.build_id + ", " +
         human_bytes(outcome->size) + ") from " + outcome->server;
}

DownloadProgress::DownloadProgress(bool tty, Write write, Now now)
    : tty_(tty), write_(std::move(write)), now_(std::move(now)) {}

DownloadProgress DownloadProgress::on_stderr() {
  return DownloadProgress(
      ::isatty(STDERR_FILENO) == 1,
      [](std::string_view s) {
        std::fwrite(s.data(), 1, s.size(), stderr);
        std::fflush(stderr);
      },
      [] { return monotonic_ns(); });
}

void DownloadProgress::progress(const DebuginfodQuery& q, long done, long total, std::string_view server) {
  if (!tty_) return;
  std::string text = download_progress_text(q, done, total, server);
  uint64_t now = now_();
  if (text == last_ || (drawn_ && now - last_ns_ < kRedrawNs)) return;
  write_(kClearLine + text);
  drawn_ = true;
  last_ = std::move(text);
  last_ns_ = now;
}

void DownloadProgress::finished(const DebuginfodQuery& q, const Result<DebuginfodFile>& outcome) {
  std::string line = download_outcome_text(q, outcome);
  std::string out = drawn_ ? kClearLine : "";
  if (!line.empty()) out += line + "\n";
  if (!out.empty()) write_(out);
  drawn_ = false;
  last_.clear();
}

}  // namespace uprof
