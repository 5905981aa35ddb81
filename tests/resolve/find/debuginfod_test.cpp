// The pure parts of the debuginfod client: the sentence for each of libdebuginfod's
// errors, and the server part of a download URL. The lookups themselves, against a
// real debuginfod server, are in tests/cli/debuginfod_test.cpp.
#include "uprof/resolve/find/debuginfod.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

namespace uprof {
namespace {

TEST(DebuginfodClient, FailureSentences) {
  const std::string u = "http://127.0.0.1:9";
  EXPECT_EQ(debuginfod_failure(-ECONNREFUSED, u, "", ""), "connection refused by " + u);
  EXPECT_EQ(debuginfod_failure(-ENOENT, u, "", ""),
            "not found on " + u + " (or a miss from there is remembered in the client cache for 10 minutes)");
  EXPECT_EQ(debuginfod_failure(-EHOSTUNREACH, "http://nosuch.invalid", "", ""),
            "cannot resolve the host of http://nosuch.invalid");
  EXPECT_EQ(debuginfod_failure(-ETIME, u, "", ""),
            "timed out: no data from " + u + " within 90 s, the default of DEBUGINFOD_TIMEOUT");
  EXPECT_EQ(debuginfod_failure(-ETIME, u, "5", ""), "timed out: no data from " + u + " within DEBUGINFOD_TIMEOUT=5 s");
  EXPECT_EQ(debuginfod_failure(-ETIME, u, "5", "30"),
            "timed out: no data from " + u + " within DEBUGINFOD_TIMEOUT=5 s, or not all of it within "
            "DEBUGINFOD_MAXTIME=30 s");
  // Anything else: the C library's text, and where from.
  EXPECT_EQ(debuginfod_failure(-ENOMEM, u, "", ""), std::string(std::strerror(ENOMEM)) + " (from " + u + ")");
}

TEST(DebuginfodClient, ServerOfADownloadUrl) {
  EXPECT_EQ(debuginfod_server_of("http://127.0.0.1:8002/buildid/3f2a/debuginfo"), "http://127.0.0.1:8002");
  EXPECT_EQ(debuginfod_server_of("https://debuginfod.debian.net/buildid/3f2a/debuginfo"),
            "https://debuginfod.debian.net");
  EXPECT_EQ(debuginfod_server_of("http://h:1"), "http://h:1");
}

TEST(DebuginfodClient, ErrorsNameTheBinaryAndBuildId) {
  EXPECT_EQ(debuginfod_error_prefix({.binary = "./prog", .build_id = "3f2a"}),
            "debuginfod: no debug file for ./prog (build-id 3f2a): ");
}

}  // namespace
}  // namespace uprof
