// Finding the separate debug file of a stripped binary, where gdb and perf look:
//   1. by build-id:   <debug-dir>/.build-id/ab/cdef0123....debug
//   2. by debuglink:  <dir of binary>/<link>, <dir>/.debug/<link>, <debug-dir>/<dir>/<link>
// A candidate counts only if it matches: same build-id when both files have one,
// otherwise the debuglink CRC-32 of its contents.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "uprof/resolve/elf_file.h"

namespace uprof {

struct DebugSearch {
  std::vector<std::string> debug_dirs{"/usr/lib/debug"};
};

struct DebugFileLookup {
  std::optional<std::string> path;        // the debug file found, if any
  std::vector<std::string> looked_in;     // every candidate path tried, in order
  std::vector<std::string> rejected;      // "PATH: build-id differs" and the like
};

DebugFileLookup find_debug_file(const ElfFile& binary, const DebugSearch& search);

}  // namespace uprof
