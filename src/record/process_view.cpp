#include "uprof/record/process_view.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace uprof {
namespace {

std::string link_of(const std::string& path) {
  std::error_code ec;
  auto target = std::filesystem::read_symlink(path, ec);
  return ec ? std::string() : target.string();
}

std::string proc(pid_t pid, const std::string& rest) { return "/proc/" + std::to_string(pid) + "/" + rest; }

// Whether `path` is the file with that device and inode.
bool same_file(const std::string& path, uint64_t device, uint64_t inode) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  const uint64_t dev = (uint64_t{major(st.st_dev)} << 32) | minor(st.st_dev);
  return st.st_ino == inode && dev == device;
}

}  // namespace

// "55d0c0a00000-55d0c0a01000 r--p 00000000 fd:01 1835012   /usr/bin/app"
std::vector<MappedFile> parse_mapped_files(const std::string& maps_text) {
  std::vector<MappedFile> out;
  std::istringstream in(maps_text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string range, perms, offset, dev;
    uint64_t inode = 0;
    if (!(f >> range >> perms >> offset >> dev >> inode)) continue;
    const auto slash = line.find('/');
    if (slash == std::string::npos || inode == 0 || line.find(" (deleted)") != std::string::npos) continue;
    std::string path = line.substr(slash);
    bool seen = false;
    for (const MappedFile& m : out) seen = seen || m.path == path;
    if (seen) continue;
    const auto colon = dev.find(':');
    uint64_t device = 0;
    if (colon != std::string::npos)
      device = (std::stoull(dev.substr(0, colon), nullptr, 16) << 32) | std::stoull(dev.substr(colon + 1), nullptr, 16);
    out.push_back(MappedFile{.path = std::move(path), .range = range, .device = device, .inode = inode});
  }
  return out;
}

ProcessView ProcessView::of(pid_t pid) {
  ProcessView v;
  v.pid_ = pid;
  const std::string own_ns = link_of("/proc/self/ns/mnt"), its_ns = link_of(proc(pid, "ns/mnt"));
  const std::string own_root = link_of("/proc/self/root"), its_root = link_of(proc(pid, "root"));
  v.foreign_ = (!its_ns.empty() && its_ns != own_ns) || (!its_root.empty() && its_root != own_root);
  return v;
}

std::string ProcessView::path(const std::string& in_process) const {
  if (!foreign_ || in_process.empty() || in_process.front() != '/') return in_process;
  return proc(pid_, "root") + in_process;
}

std::vector<std::string> ProcessView::mapped_paths() const {
  std::ifstream maps(proc(pid_, "maps"));
  std::stringstream text;
  text << maps.rdbuf();
  std::vector<std::string> out;
  for (const MappedFile& m : parse_mapped_files(text.str())) {
    const std::string p = path(m.path);
    out.push_back(!foreign_ || same_file(p, m.device, m.inode) ? p : proc(pid_, "map_files/" + m.range));
  }
  return out;
}

std::string ProcessView::program() const {
  const std::string exe = link_of(proc(pid_, "exe"));
  if (!foreign_) return exe;
  // Its path in its own view reaches it, unless the file there was replaced since.
  struct stat st {};
  if (::stat(proc(pid_, "exe").c_str(), &st) != 0) return path(exe);
  const uint64_t dev = (uint64_t{major(st.st_dev)} << 32) | minor(st.st_dev);
  return same_file(path(exe), dev, st.st_ino) ? path(exe) : proc(pid_, "exe");
}

}  // namespace uprof
