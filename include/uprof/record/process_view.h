// The files of a process that `-p PID` attaches to, as that process sees them. A
// process in another mount namespace (a container, `unshare -m`) or under another root
// (chroot) names its program and libraries by paths that mean other files, or nothing,
// in uprof's own namespace: /usr/bin/app there may be a bind mount over a different
// /usr/bin/app here. A uprobe goes on an inode, found by the path uprof gives the
// kernel, so every path of that process is reached through /proc/PID/root, which
// resolves in the process's own view; and where even that is not the file it maps (the
// file was replaced after it was mapped), through /proc/PID/map_files/START-END, which
// is exactly the mapped inode.
//
//   in the process: /srv/app        host: /proc/4242/root/srv/app
//   replaced since:                       /proc/4242/map_files/55d0c0a00000-55d0c0a01000
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace uprof {

struct MappedFile {
  std::string path;       // as /proc/PID/maps names it, in the process's view
  std::string range;      // "55d0c0a00000-55d0c0a01000", its first mapping
  uint64_t device = 0;    // major << 32 | minor, from maps
  uint64_t inode = 0;
};

// /proc/PID/maps lines with a file (not deleted), each file once, in order.
std::vector<MappedFile> parse_mapped_files(const std::string& maps_text);

class ProcessView {
 public:
  // The view of process `pid` (none of its files need to exist here).
  static ProcessView of(pid_t pid);
  // Whether its paths need /proc/PID/root: another mount namespace or another root.
  bool foreign() const { return foreign_; }
  // A path the process uses, as uprof must open it: itself when the view is uprof's own.
  std::string path(const std::string& in_process) const;
  // Every file it maps, each a path that reaches the very inode it maps.
  std::vector<std::string> mapped_paths() const;
  // Its program, likewise.
  std::string program() const;

 private:
  pid_t pid_ = -1;
  bool foreign_ = false;
};

}  // namespace uprof
