#include "uprof/util/private_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>
#include <ctime>

#include "uprof/util/file_type.h"
#include "uprof/util/sudo_user.h"

namespace uprof {
namespace {

struct Split {
  std::string dir;   // "." for a bare name
  std::string name;  // "" for "dir/"
};

Split split(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// ".uprof.data.3f9a0c12": hidden, beside its name, so that the rename stays in one
// file system and the directory shows only the finished file.
std::string temp_name(const Split& s) {
  uint32_t r = 0;
  if (::getrandom(&r, sizeof r, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof r))
    r = static_cast<uint32_t>(::getpid()) * 2654435761u ^ static_cast<uint32_t>(::time(nullptr));
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, ".%08x", r);
  return (s.dir == "/" ? "/" : s.dir + "/") + "." + s.name + suffix;
}

}  // namespace

Status PrivateFile::check(const std::string& path) {
  if (path.empty()) return err("no file named");
  const Split s = split(path);
  if (s.name.empty() || s.name == "." || s.name == "..") return err(path, ": is a directory");
  if (const auto mode = lstat_mode(path)) {
    if (S_ISLNK(*mode)) {
      const std::string to = link_target(path);
      // A link planted in a shared directory would lead root's write anywhere; a link
      // the user made (to a bigger disk, /dev/stdout) is not uprof's to replace, and
      // uprof keeps no .old copy to restore it from.
      return err(path, " is a symbolic link", to.empty() ? "" : " (to " + to + ")",
                 ": uprof neither writes through a link nor replaces it; remove it or name another file");
    }
    if (S_ISDIR(*mode)) return err(path, ": is a directory");
    if (!S_ISREG(*mode))
      return err(path, " is ", file_type_name(*mode), ", not a regular file: uprof writes only regular files; "
                 "name another file");
  } else if (errno != ENOENT) {
    return err(path, ": ", std::strerror(errno));
  }
  struct stat dir {};
  if (::stat(s.dir.c_str(), &dir) != 0)
    return errno == ENOENT ? err(path, ": the directory ", s.dir, " does not exist") : err(path, ": ", s.dir, ": ", std::strerror(errno));
  if (!S_ISDIR(dir.st_mode)) return err(path, ": ", s.dir, " is not a directory");
  // The new file is made in the directory, whether or not one is there already.
  if (::access(s.dir.c_str(), W_OK | X_OK) != 0) return err(path, ": ", s.dir, ": ", std::strerror(errno));
  return ok();
}

Result<PrivateFile> PrivateFile::create(const std::string& path) {
  UPROF_TRY(check(path));
  const Split s = split(path);
  for (int attempt = 0; attempt < 100; attempt++) {
    std::string temp = temp_name(s);
    UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) {
      if (errno == EEXIST) continue;
      return err(path, ": ", std::strerror(errno));
    }
    // On the fd, not the name: nothing can swap the file in between. A file system that
    // refuses (root squashed on NFS) leaves it root's, still 0600.
    if (const auto user = sudo_user()) {
      const int chowned = ::fchown(fd.get(), user->uid, user->gid);
      (void)chowned;
    }
    return PrivateFile(path, std::move(temp), std::move(fd));
  }
  return err(path, ": no free temporary name beside it in ", s.dir);
}

PrivateFile::PrivateFile(PrivateFile&& o) noexcept
    : path_(std::move(o.path_)), temp_(std::move(o.temp_)), fd_(std::move(o.fd_)), placed_(o.placed_) {
  o.placed_ = true;  // nothing for the moved-from object to remove
}

PrivateFile& PrivateFile::operator=(PrivateFile&& o) noexcept {
  if (this == &o) return *this;
  if (!placed_ && !temp_.empty()) ::unlink(temp_.c_str());
  path_ = std::move(o.path_);
  temp_ = std::move(o.temp_);
  fd_ = std::move(o.fd_);
  placed_ = std::exchange(o.placed_, true);
  return *this;
}

PrivateFile::~PrivateFile() {
  if (!placed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

Status PrivateFile::place() {
  if (placed_) return ok();
  // What is at the name now may differ from what check() saw: rename(2) replaces the
  // name itself whatever it is (a link is replaced, its target untouched) and fails on
  // a directory.
  if (::rename(temp_.c_str(), path_.c_str()) != 0) return err(path_, ": ", std::strerror(errno));
  placed_ = true;
  return ok();
}

}  // namespace uprof
