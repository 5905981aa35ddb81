// A file uprof writes for the user (the data file, a report), made so that running as
// root in a directory others can write to harms nobody:
//  - never through a symbolic link, never onto a FIFO, device or socket: `check` refuses
//    them by name, before anything runs;
//  - created fresh beside its name (".NAME.XXXXXXXX", O_CREAT|O_EXCL|O_NOFOLLOW, so
//    nothing planted there is opened), mode 0600 (what it holds are other programs'
//    arguments), owned by the user who ran sudo (util/sudo_user.h);
//  - then renamed onto its name, which replaces a regular file there (as writing it
//    over did before) and never follows whatever the name holds.
//   auto f = PrivateFile::create("uprof.data");     // ./.uprof.data.3f9a0c12
//   write(f->fd(), ...);  f->place();                 // ./uprof.data
// Errors carry no subsystem: the caller adds its own ("store: ", "report: ").
#pragma once

#include <string>

#include "uprof/util/result.h"
#include "uprof/util/unique_fd.h"

namespace uprof {

class PrivateFile {
 public:
  // Whether `path` can take a new file, creating nothing: what is there now is absent or
  // a regular file, and its directory exists and can be written.
  //   "u.data is a symbolic link (to /etc/passwd): uprof neither writes through a link
  //    nor replaces it; remove it or name another file"
  static Status check(const std::string& path);

  // check(), then the temporary file beside `path`, open for writing.
  static Result<PrivateFile> create(const std::string& path);

  PrivateFile() = default;  // no file
  PrivateFile(PrivateFile&& o) noexcept;
  PrivateFile& operator=(PrivateFile&& o) noexcept;
  PrivateFile(const PrivateFile&) = delete;
  PrivateFile& operator=(const PrivateFile&) = delete;
  ~PrivateFile();  // a file never placed is removed

  int fd() const { return fd_.get(); }
  bool valid() const { return fd_.valid(); }
  // Renames the temporary file onto its name. The fd stays open on the same file.
  Status place();
  bool placed() const { return placed_; }
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }

 private:
  PrivateFile(std::string path, std::string temp, UniqueFd fd)
      : path_(std::move(path)), temp_(std::move(temp)), fd_(std::move(fd)) {}
  std::string path_, temp_;
  UniqueFd fd_;
  bool placed_ = false;
};

}  // namespace uprof
