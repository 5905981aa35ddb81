// Asking debuginfod servers for a binary's debug file by its build-id, the last place
// find_debug_file looks (after the build-id and debuglink paths on this machine).
//
// The client is elfutils' libdebuginfod (libdebuginfod.so.1), dlopen'ed on the first
// lookup, as libdw itself does: uprof runs where it is not installed, and a run that
// never asks (no $DEBUGINFOD_URLS, or a local debug file matched) never loads it and
// the libcurl it brings. The library reads its settings from the environment:
//   DEBUGINFOD_URLS        servers, separated by spaces: "http://127.0.0.1:8002 https://debuginfod.debian.net"
//   DEBUGINFOD_CACHE_PATH  its cache (default $XDG_CACHE_HOME/debuginfod_client, ~/.cache/debuginfod_client);
//                          a file found there is used without asking any server
//   DEBUGINFOD_TIMEOUT     seconds a server has to start sending (default 90); it retries
//                          DEBUGINFOD_RETRY_LIMIT times (default 2) after a timeout
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "uprof/util/result.h"

namespace uprof {

struct DebuginfodQuery {
  std::string binary;    // the file whose debug file is wanted, for messages: "./funcs_stripped"
  std::string build_id;  // lowercase hex: "3f2a9c..."
};

struct DebuginfodFile {
  std::string path;    // in the client's cache: "$DEBUGINFOD_CACHE_PATH/3f2a9c.../debuginfo"
  std::string server;  // the server it was downloaded from: "http://127.0.0.1:8002"; "" when the cache had it
  uint64_t size = 0;   // bytes
};

// What a lookup tells its user while it runs; the commands draw it on stderr
// (present/download_progress.h). Called on the looking-up thread.
class DebuginfodListener {
 public:
  virtual ~DebuginfodListener() = default;
  // While a download runs: `done` bytes of `total` (0 or less while unknown), from
  // `server` ("" until a server has started answering).
  virtual void progress(const DebuginfodQuery& q, long done, long total, std::string_view server) = 0;
  // The lookup ended: the file, or why not (an Error's message, which names the binary and build-id).
  virtual void finished(const DebuginfodQuery& q, const Result<DebuginfodFile>& outcome) = 0;
};

// $DEBUGINFOD_URLS, or "" when it is unset or blank: no server to ask.
std::string debuginfod_urls();

// Asks the client's cache, then the servers of $DEBUGINFOD_URLS, for the debug file
// of q.build_id. Errors read
//   "debuginfod: no debug file for ./funcs_stripped (build-id 3f2a...): connection refused by http://127.0.0.1:9"
Result<DebuginfodFile> debuginfod_find_debuginfo(const DebuginfodQuery& q, DebuginfodListener* listener);

// The start of every lookup's error: "debuginfod: no debug file for BIN (build-id ID): ".
std::string debuginfod_error_prefix(const DebuginfodQuery& q);

// Why a lookup failed, from the negative errno libdebuginfod returns:
// -ECONNREFUSED -> "connection refused by URLS", -ENOENT -> "not found on URLS ...",
// -ETIME -> "timed out: no data from URLS within DEBUGINFOD_TIMEOUT=1 s". The last two
// are $DEBUGINFOD_TIMEOUT and $DEBUGINFOD_MAXTIME ("" when unset).
std::string debuginfod_failure(int neg_errno, std::string_view urls, std::string_view timeout_env,
                               std::string_view maxtime_env);

// "http://host:8002/buildid/3f2a.../debuginfo" -> "http://host:8002"
std::string debuginfod_server_of(std::string_view url);

}  // namespace uprof
