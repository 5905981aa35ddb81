#include "uprof/attach/tracefs_uprobe.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <sstream>
#include <utility>

#include "uprof/util/unique_fd.h"

namespace uprof {
namespace {

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

Status write_definition(const std::string& tracefs_dir, const std::string& line) {
  std::string path = tracefs_dir + "/uprobe_events";
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  if (!fd.valid()) return err("attach: cannot open ", path, ": ", std::strerror(errno));
  std::string text = line + "\n";
  ssize_t n = ::write(fd.get(), text.data(), text.size());
  if (n != static_cast<ssize_t>(text.size()))
    return err("attach: writing '", line, "' to ", path, ": ",
               n < 0 ? std::strerror(errno) : "short write",
               " (the kernel's reason is in ", tracefs_dir, "/error_log)");
  return ok();
}

Result<uint64_t> read_id(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return err("attach: cannot open ", path, ": ", std::strerror(errno));
  char buf[32] = {};
  ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
  if (n <= 0) return err("attach: cannot read ", path);
  uint64_t id = 0;
  auto [p, ec] = std::from_chars(buf, buf + n, id);
  if (ec != std::errc() || p == buf) return err("attach: ", path, ": not a number: '", buf, "'");
  return id;
}

}  // namespace

Result<std::string> format_uprobe_definition(const TracefsUprobeSpec& spec) {
  if (spec.path.empty()) return err("attach: uprobe with an empty path");
  if (spec.path.find_first_of(" \t\n") != std::string::npos)
    return err("attach: '", spec.path, "': tracefs cannot take a path with white space");
  std::ostringstream os;
  os << (spec.is_return ? "r:" : "p:") << spec.group << "/" << spec.name << " " << spec.path
     << ":0x" << std::hex << spec.offset;
  if (spec.ref_ctr_offset != 0) os << "(0x" << spec.ref_ctr_offset << ")";
  if (!spec.fetch_args.empty()) os << " " << spec.fetch_args;
  return os.str();
}

Result<std::string> find_tracefs() {
  constexpr const char* kDirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
  for (const char* dir : kDirs) {
    std::string events = std::string(dir) + "/uprobe_events";
    struct stat st {};
    if (::stat(events.c_str(), &st) == 0) return std::string(dir);
    // tracefs' root is rwx------ : a user who is not root cannot even look.
    if (errno == EACCES)
      return err("attach: ", events, ": ", std::strerror(EACCES),
                 ": tracefs uprobes need root (CAP_SYS_ADMIN); so does --backend pmu");
  }
  // Not mounted (a system without systemd's mounts): mount it where it belongs,
  // as perf does. It stays mounted, like any system mount.
  const char* dir = kDirs[0];
  if (::mount("nodev", dir, "tracefs", 0, nullptr) != 0) {
    int e = errno;
    if (e == EPERM || e == EACCES)
      return err("attach: tracefs is not mounted and mounting it needs root (CAP_SYS_ADMIN), as do uprobes: ",
                 std::strerror(e));
    if (e == ENODEV)
      return err("attach: this kernel has no tracefs (it needs CONFIG_TRACING and CONFIG_UPROBE_EVENTS)");
    return err("attach: no tracefs uprobe_events, and mounting tracefs on ", dir, " failed: ", std::strerror(e),
               " (mount it: mount -t tracefs nodev ", dir, ")");
  }
  if (!exists(std::string(dir) + "/uprobe_events"))
    return err("attach: tracefs has no uprobe_events: the kernel needs CONFIG_UPROBE_EVENTS");
  return std::string(dir);
}

std::string tracefs_group_for_this_process() { return "uprof_" + std::to_string(::getpid()); }

std::string next_tracefs_event_name() {
  static std::atomic<uint64_t> next{0};
  return "e" + std::to_string(next.fetch_add(1));
}

Result<TracefsUprobe> TracefsUprobe::create(const std::string& tracefs_dir,
                                            TracefsUprobeSpec spec) {
  UPROF_ASSIGN(std::string line, format_uprobe_definition(spec));
  UPROF_TRY(write_definition(tracefs_dir, line));
  TracefsUprobe probe;
  probe.tracefs_dir_ = tracefs_dir;
  probe.spec_ = std::move(spec);
  probe.defined_ = true;  // from here on the destructor removes it
  auto id = read_id(tracefs_dir + "/events/" + probe.spec_.group + "/" + probe.spec_.name + "/id");
  if (!id) return std::move(id).take_error();
  probe.id_ = *id;
  return probe;
}

TracefsUprobe::TracefsUprobe(TracefsUprobe&& o) noexcept
    : tracefs_dir_(std::move(o.tracefs_dir_)),
      spec_(std::move(o.spec_)),
      id_(o.id_),
      defined_(std::exchange(o.defined_, false)) {}

TracefsUprobe& TracefsUprobe::operator=(TracefsUprobe&& o) noexcept {
  if (this != &o) {
    (void)remove();
    tracefs_dir_ = std::move(o.tracefs_dir_);
    spec_ = std::move(o.spec_);
    id_ = o.id_;
    defined_ = std::exchange(o.defined_, false);
  }
  return *this;
}

TracefsUprobe::~TracefsUprobe() { (void)remove(); }

Status TracefsUprobe::remove() {
  if (!defined_) return ok();
  defined_ = false;
  return write_definition(tracefs_dir_, "-:" + spec_.group + "/" + spec_.name);
}

}  // namespace uprof
