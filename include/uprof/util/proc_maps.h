// The lines of /proc/PID/maps, parsed. One line:
//   7f1c2a228000-7f1c2a3bd000 r-xp 00028000 fd:01 1316    /usr/lib/x86_64-linux-gnu/libc.so.6
//   start-end                 perms offset  dev   inode   path
// Addresses, offset and device numbers are hex; the path is the rest of the line (it may
// hold spaces, and ends in " (deleted)" for a file removed since it was mapped).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace uprof {

struct MapsEntry {
  uint64_t start = 0, end = 0;
  std::string perms;          // "r-xp"
  uint64_t offset = 0;        // file offset of `start`
  uint32_t dev_major = 0, dev_minor = 0;
  uint64_t inode = 0;
  std::string path;           // "" for an anonymous mapping, "[vdso]" and the like as written

  bool executable() const { return perms.size() > 2 && perms[2] == 'x'; }
  bool file_backed() const { return inode != 0 && !path.empty() && path[0] == '/'; }
};

// Every line that parses; others (none in a real maps file) are skipped.
std::vector<MapsEntry> parse_maps(std::string_view text);
// /proc/PID/maps of process `pid` (0: this process), parsed; empty when it cannot be read.
std::vector<MapsEntry> read_maps(int pid);

}  // namespace uprof
