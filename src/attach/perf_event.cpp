#include "uprof/attach/perf_event.h"

#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

namespace uprof {
namespace {

std::string describe(const perf_event_attr& attr, pid_t pid, int cpu, const UprobeTarget* probe) {
  std::ostringstream os;
  os << "perf_event_open(";
  if (probe) os << probe->path << ":0x" << std::hex << probe->offset << std::dec
                << (probe->is_return ? " return" : "");
  else os << "type " << attr.type << " config 0x" << std::hex << attr.config << std::dec;
  os << ", pid " << pid << ", cpu " << cpu << ")";
  return os.str();
}

}  // namespace

std::string open_error_message(int e, const perf_event_attr& attr, pid_t pid, int cpu,
                               const UprobeTarget* probe) {
  std::ostringstream why;  // what to do about it; empty when errno says it all
  switch (e) {
    case EACCES:
    case EPERM:
      why << "the uprobe PMU needs CAP_SYS_ADMIN (run as root)";
      break;
    case EMFILE: {
      rlimit rl{};
      ::getrlimit(RLIMIT_NOFILE, &rl);
      why << "too many open files (RLIMIT_NOFILE " << rl.rlim_cur << ", hard " << rl.rlim_max
          << "): one event per probe per CPU is needed; raise it (ulimit -n; past the hard limit "
             "as root, ulimit -Hn; LimitNOFILE= for a service) or probe fewer functions";
      break;
    }
    case ENFILE:
      why << "the system-wide file table is full (fs.file-max)";
      break;
    case ENOENT:
      if (probe) why << "no such file '" << probe->path << "'";
      else why << "no such PMU or event";
      break;
    case EINVAL:
      if (probe)
        why << "the kernel refused offset 0x" << std::hex << probe->offset << std::dec << " in '"
            << probe->path << "' (beyond the file's end, misaligned for the architecture, "
            << "or not a regular file)";
      break;
    case ESRCH:
      why << "no process " << pid << " (it exited?)";
      break;
    case E2BIG:
      why << "path too long or attr size not understood by this kernel";
      break;
    case EOPNOTSUPP:
      why << "a requested sample field is not supported for this event";
      break;
    default:
      break;
  }
  std::string reason = why.str();
  std::ostringstream os;
  os << "attach: " << describe(attr, pid, cpu, probe) << ": " << reason
     << (reason.empty() ? "" : ": ") << std::strerror(e);
  return os.str();
}

Result<UniqueFd> open_perf_event(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd,
                                 unsigned long flags, const UprobeTarget* probe) {
  long fd = ::syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd, flags);
  if (fd < 0) return Error{open_error_message(errno, attr, pid, cpu, probe)};
  return UniqueFd(static_cast<int>(fd));
}

Status redirect_output(int fd, int target_fd) {
  if (::ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, target_fd) != 0)
    return err("attach: PERF_EVENT_IOC_SET_OUTPUT ", fd, " -> ", target_fd, ": ",
               std::strerror(errno));
  return ok();
}

Status set_event_filter(int fd, const std::string& filter) {
  if (::ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter.c_str()) != 0)
    return err("attach: PERF_EVENT_IOC_SET_FILTER '", filter, "' on fd ", fd, ": ", std::strerror(errno));
  return ok();
}

Result<uint64_t> event_id(int fd) {
  uint64_t id = 0;
  if (::ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0)
    return err("attach: PERF_EVENT_IOC_ID on fd ", fd, ": ", std::strerror(errno));
  return id;
}

Result<CounterValue> read_counter(int fd, uint64_t read_format) {
  if (read_format & ~uint64_t{PERF_FORMAT_LOST})
    return err("attach: read_format 0x", std::hex, read_format, " is not supported");
  // { u64 value; u64 lost (PERF_FORMAT_LOST); }
  uint64_t v[2] = {0, 0};
  std::size_t want = (read_format & PERF_FORMAT_LOST) ? sizeof v : sizeof v[0];
  ssize_t n = ::read(fd, v, want);
  if (n != static_cast<ssize_t>(want))
    return err("attach: reading the counter of fd ", fd, ": ",
               n < 0 ? std::strerror(errno) : "short read");
  CounterValue c{.count = v[0]};
  if (read_format & PERF_FORMAT_LOST) c.lost = v[1];
  return c;
}

bool kernel_supports_format_lost() {
  static const bool supported = [] {
    perf_event_attr a{};
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_DUMMY;
    a.disabled = 1;
    a.exclude_kernel = 1;  // what an unprivileged uprof may open
    a.read_format = PERF_FORMAT_LOST;
    long fd = ::syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) return false;
    ::close(static_cast<int>(fd));
    return true;
  }();
  return supported;
}

Status enable_event(int fd) {
  if (::ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0)
    return err("attach: PERF_EVENT_IOC_ENABLE on fd ", fd, ": ", std::strerror(errno));
  return ok();
}

Status disable_event(int fd) {
  if (::ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) != 0)
    return err("attach: PERF_EVENT_IOC_DISABLE on fd ", fd, ": ", std::strerror(errno));
  return ok();
}

}  // namespace uprof
