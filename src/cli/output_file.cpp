#include "output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

namespace uprof::cli {

Result<OutputFile> OutputFile::open(std::string_view command, const std::string& path) {
  if (path.empty() || path == "-") return OutputFile(std::string(command), "", -1, false);
  struct stat st {};
  const bool existed = ::stat(path.c_str(), &st) == 0;
  // No O_TRUNC: the file keeps what it holds until the output is ready.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return err(command, ": ", path, ": ", std::strerror(errno));
  return OutputFile(std::string(command), path, fd, !existed);
}

OutputFile::OutputFile(OutputFile&& o) noexcept
    : command_(std::move(o.command_)), path_(std::move(o.path_)), fd_(o.fd_), created_(o.created_), written_(o.written_) {
  o.fd_ = -1;
  o.created_ = false;
}

OutputFile::~OutputFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  if (created_ && !written_) ::unlink(path_.c_str());
}

Status OutputFile::write(std::string_view content) {
  written_ = true;
  if (path_.empty()) {
    std::cout << content << std::flush;
    if (!std::cout) return err(command_, ": writing to stdout failed");
    return ok();
  }
  // A regular file is emptied first; /dev/null or a pipe cannot be, and need not.
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && ::ftruncate(fd_, 0) != 0)
    return err(command_, ": ", path_, ": ", std::strerror(errno));
  while (!content.empty()) {
    const ssize_t n = ::write(fd_, content.data(), content.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return err(command_, ": ", path_, ": ", std::strerror(n < 0 ? errno : EIO));
    content.remove_prefix(static_cast<std::size_t>(n));
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return err(command_, ": ", path_, ": ", std::strerror(errno));
  return ok();
}

}  // namespace uprof::cli
