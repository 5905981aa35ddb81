#include "output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "uprof/util/file_type.h"

namespace uprof::cli {
namespace {

Status write_all(int fd, std::string_view content) {
  while (!content.empty()) {
    const ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{std::strerror(errno)};
    if (n == 0) return Error{std::strerror(ENOSPC)};
    content.remove_prefix(static_cast<std::size_t>(n));
  }
  return ok();
}

}  // namespace

Result<OutputFile> OutputFile::open(std::string_view command, const std::string& path) {
  OutputFile out(std::string(command), path == "-" ? "" : path);
  if (out.path_.empty()) return out;
  // A device is opened at once, by this name and not through a link (O_NOFOLLOW), and
  // is one again once open (fstat): no file is created.
  if (const auto mode = lstat_mode(path); mode && S_ISCHR(*mode)) {
    out.device_.reset(::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC));
    struct stat st {};
    if (!out.device_.valid() || ::fstat(out.device_.get(), &st) != 0)
      return err(command, ": ", path, ": ", std::strerror(errno));
    if (!S_ISCHR(st.st_mode)) return err(command, ": ", path, " is ", file_type_name(st.st_mode), " now");
    return out;
  }
  if (auto st = PrivateFile::check(path); !st) return err(command, ": ", st.error().message);
  return out;
}

Status OutputFile::write(std::string_view content) {
  if (written_) return err(command_, ": ", path_.empty() ? "stdout" : path_, ": written twice");
  written_ = true;
  if (path_.empty()) {
    std::cout << content << std::flush;
    if (!std::cout) return err(command_, ": writing to stdout failed");
    return ok();
  }
  if (device_.valid()) {
    if (auto st = write_all(device_.get(), content); !st) return err(command_, ": ", path_, ": ", st.error().message);
    device_.reset();
    return ok();
  }
  auto file = PrivateFile::create(path_);
  if (!file) return err(command_, ": ", file.error().message);
  if (auto st = write_all(file->fd(), content); !st) return err(command_, ": ", path_, ": ", st.error().message);
  if (::fsync(file->fd()) != 0 && errno != EINVAL) return err(command_, ": ", path_, ": ", std::strerror(errno));
  if (auto st = file->place(); !st) return err(command_, ": ", st.error().message);
  return ok();
}

}  // namespace uprof::cli
