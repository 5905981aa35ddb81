// The debuginfod download line: redrawn in place on a terminal, at most ten times a
// second and only when it changes; elsewhere one line with the outcome, nothing for a
// cache hit. Driven by hand-made progress calls and a fake clock.
#include "uprof/present/download_progress.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

const DebuginfodQuery kQuery{.binary = "/tmp/x/funcs_stripped", .build_id = "3f2a9c81d0e4b5a6c7d8e9f0a1b2c3d4e5f60718"};

struct Screen {
  std::string text;
  uint64_t now = 1'000'000'000;
  DownloadProgress make(bool tty) {
    return DownloadProgress(tty, [this](std::string_view s) { text += s; }, [this] { return now; });
  }
};

TEST(DownloadProgress, HumanBytes) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(999), "999 B");
  EXPECT_EQ(human_bytes(1000), "1.0 kB");
  EXPECT_EQ(human_bytes(40100), "40.1 kB");
  EXPECT_EQ(human_bytes(999'999), "1.0 MB");
  EXPECT_EQ(human_bytes(4'500'000), "4.5 MB");
  EXPECT_EQ(human_bytes(3'200'000'000), "3.2 GB");
}

TEST(DownloadProgress, ProgressText) {
  EXPECT_EQ(download_progress_text(kQuery, 1200, 4500000, "http://127.0.0.1:8002"),
            "uprof: debuginfod: funcs_stripped (build-id 3f2a9c81...): 1.2 kB of 4.5 MB from http://127.0.0.1:8002");
  EXPECT_EQ(download_progress_text(kQuery, 1200, -1, "http://h:1"),
            "uprof: debuginfod: funcs_stripped (build-id 3f2a9c81...): 1.2 kB from http://h:1");
}

TEST(DownloadProgress, TerminalLineIsRedrawnInPlaceAndThrottled) {
  Screen s;
  auto p = s.make(true);
  p.progress(kQuery, 0, 0, "http://h:1");
  EXPECT_EQ(s.text, "\r\033[Kuprof: debuginfod: funcs_stripped (build-id 3f2a9c81...): 0 B from http://h:1");
  s.text.clear();
  // 10 ms later: too soon to draw again.
  s.now += 10'000'000;
  p.progress(kQuery, 5000, 10000, "http://h:1");
  EXPECT_EQ(s.text, "");
  // 100 ms after the last drawing: drawn.
  s.now += 90'000'000;
  p.progress(kQuery, 6000, 10000, "http://h:1");
  EXPECT_EQ(s.text, "\r\033[Kuprof: debuginfod: funcs_stripped (build-id 3f2a9c81...): 6.0 kB of 10.0 kB from http://h:1");
  s.text.clear();
  // The same text again later: not drawn.
  s.now += 500'000'000;
  p.progress(kQuery, 6000, 10000, "http://h:1");
  EXPECT_EQ(s.text, "");
  // The end replaces the line with the outcome, on a line of its own.
  p.finished(kQuery, DebuginfodFile{.path = "/c/x/debuginfo", .server = "http://h:1", .size = 10000});
  EXPECT_EQ(s.text, "\r\033[Kuprof: debuginfod: downloaded the debug file of /tmp/x/funcs_stripped (build-id " +
                        kQuery.build_id + ", 10.0 kB) from http://h:1\n");
}

TEST(DownloadProgress, CacheHitLeavesNothing) {
  Screen s;
  auto p = s.make(true);
  // The client calls back while it cleans its cache, before it finds the file there.
  p.progress(kQuery, 3, 0, "");
  EXPECT_NE(s.text, "");
  s.text.clear();
  p.finished(kQuery, DebuginfodFile{.path = "/c/x/debuginfo", .server = "", .size = 10000});
  EXPECT_EQ(s.text, "\r\033[K");

  Screen quiet;
  auto q = quiet.make(false);
  q.finished(kQuery, DebuginfodFile{.path = "/c/x/debuginfo", .server = "", .size = 10000});
  EXPECT_EQ(quiet.text, "");
}

TEST(DownloadProgress, NotATerminalWritesOneLine) {
  Screen s;
  auto p = s.make(false);
  for (int i = 0; i < 100; ++i) {
    s.now += 200'000'000;
    p.progress(kQuery, i * 1000, 100000, "http://h:1");
  }
  EXPECT_EQ(s.text, "");
  p.finished(kQuery, Error{"debuginfod: no debug file for /tmp/x/funcs_stripped (build-id 3f2a): connection refused by "
                           "http://127.0.0.1:9"});
  EXPECT_EQ(s.text, "uprof: debuginfod: no debug file for /tmp/x/funcs_stripped (build-id 3f2a): connection refused "
                    "by http://127.0.0.1:9; going on without it\n");
}

}  // namespace
}  // namespace uprof
