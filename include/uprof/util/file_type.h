// What kind of file a path names, as a message says it. uprof reads ELF files and data
// files and writes data files and reports: every other kind is refused by name, before
// it is opened for reading (a FIFO blocks open(2) until a writer comes; /dev/zero never
// ends) or written (a planted link leads elsewhere).
//   file_type_name(S_IFIFO | 0644)  -> "a FIFO (named pipe)"
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>
#include <string_view>

namespace uprof {

// "a regular file", "a directory", "a symbolic link", "a FIFO (named pipe)", "a socket",
// "a character device", "a block device"; "a file of unknown type" for anything else.
std::string_view file_type_name(mode_t mode);

// lstat(2) of `path`: its mode, or nullopt with errno set (ENOENT: nothing there).
std::optional<mode_t> lstat_mode(const std::string& path);

// What a symbolic link points at, for a message ("" if it cannot be read).
std::string link_target(const std::string& path);

}  // namespace uprof
