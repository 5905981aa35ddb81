// A file's path as uprof keeps it: absolute, with symlinks resolved, so that one file
// named two ways is one image. Except a path through another process's view
// (/proc/PID/root/..., /proc/PID/map_files/..., /proc/PID/exe, record/process_view.h):
// those links lead into that process's mount namespace, and resolving them gives a
// path that, read in uprof's own, names another file or none.
#pragma once

#include <string>

namespace uprof {

std::string canonical_path(const std::string& path);

}  // namespace uprof
