// Finding the separate debug file of a stripped binary, where gdb and perf look:
//   1. by build-id:   <debug-dir>/.build-id/ab/cdef0123....debug
//   2. by debuglink:  <dir of binary>/<link>, <dir>/.debug/<link>,
//                     <debug-dir>/<dir>/<link>, <debug-dir>/<link>
//      (<dir>: the binary's directory, absolute and with symlinks resolved)
//   3. by build-id from the debuginfod servers of $DEBUGINFOD_URLS, when the search
//      allows it (resolve/find/debuginfod.h)
// A candidate counts only if it matches: same build-id when both files have one,
// otherwise the debuglink CRC-32 of its contents.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "uprof/resolve/find/debuginfod.h"
#include "uprof/resolve/elf/elf_file.h"

namespace uprof {

struct DebugSearch {
  std::vector<std::string> debug_dirs{"/usr/lib/debug"};
  // Ask debuginfod (when $DEBUGINFOD_URLS is set) once the local paths failed. Off by
  // default so that a library user or a test never reaches the network unasked; the
  // commands turn it on.
  bool debuginfod = false;
  // Told of a download's progress and of its end (the commands draw it on stderr); may be null.
  DebuginfodListener* listener = nullptr;
};

struct DebugFileLookup {
  std::optional<std::string> path;        // the debug file found, if any
  // Every candidate tried, in order, with why it was refused:
  //   "/usr/lib/debug/.build-id/3f/2a...debug", "dbg/funcs.debug (CRC-32 0x1234abcd, the debuglink says 0x...)",
  //   "debuginfod http://127.0.0.1:9 (connection refused by http://127.0.0.1:9)"
  std::vector<std::string> looked_in;
  std::vector<std::string> rejected;      // "PATH: build-id differs" and the like
  std::optional<DebuginfodFile> debuginfod;  // set when the file came from debuginfod
};

DebugFileLookup find_debug_file(const ElfFile& binary, const DebugSearch& search);

// The debuglink candidates of a binary in <dir> (absolute), in the order they are tried.
std::vector<std::string> debuglink_candidates(const std::string& dir, const std::string& link,
                                              const std::vector<std::string>& debug_dirs);

}  // namespace uprof
