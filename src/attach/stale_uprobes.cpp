#include "uprof/attach/stale_uprobes.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "uprof/util/unique_fd.h"

namespace uprof {
namespace {

// Writes "-:group/name" to uprobe_events; the errno of a refusal, 0 on success.
int remove_event(const std::string& events_path, const TracefsEventName& e) {
  UniqueFd fd(::open(events_path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  if (!fd.valid()) return errno;
  std::string line = "-:" + e.group + "/" + e.name + "\n";
  ssize_t n = ::write(fd.get(), line.data(), line.size());
  if (n < 0) return errno;
  return n == static_cast<ssize_t>(line.size()) ? 0 : EIO;
}

}  // namespace

std::vector<TracefsEventName> parse_uprobe_event_names(std::string_view text) {
  std::vector<TracefsEventName> out;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    // "p:GROUP/NAME ARGS" or "r:GROUP/NAME ARGS"; a bare "p:NAME" has no group.
    std::size_t colon = line.find(':');
    std::size_t space = line.find(' ');
    if (colon == std::string_view::npos || colon == 0 || (space != std::string_view::npos && space < colon)) continue;
    std::string_view id = line.substr(colon + 1, space == std::string_view::npos ? line.npos : space - colon - 1);
    std::size_t slash = id.find('/');
    if (slash == std::string_view::npos || slash == 0 || slash + 1 == id.size()) continue;
    out.push_back({std::string(id.substr(0, slash)), std::string(id.substr(slash + 1))});
  }
  return out;
}

std::optional<pid_t> uprof_group_pid(std::string_view group) {
  constexpr std::string_view kPrefix = "uprof_";
  if (!group.starts_with(kPrefix)) return std::nullopt;
  std::string_view digits = group.substr(kPrefix.size());
  pid_t pid = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (ec != std::errc() || p != digits.data() + digits.size() || digits.empty() || pid <= 0) return std::nullopt;
  return pid;
}

bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

Result<StaleCleanup> remove_stale_uprof_probes(const std::string& tracefs_dir,
                                               const std::function<bool(pid_t)>& alive) {
  const std::string path = tracefs_dir + "/uprobe_events";
  std::ifstream in(path);
  if (!in) return err("attach: cannot read ", path, ": ", std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();

  // Group by group, in the order tracefs lists them; each pid is checked once.
  std::map<std::string, std::vector<TracefsEventName>> stale;
  std::map<pid_t, bool> checked;
  for (auto& e : parse_uprobe_event_names(text.str())) {
    auto pid = uprof_group_pid(e.group);
    if (!pid) continue;
    auto [it, fresh] = checked.emplace(*pid, false);
    if (fresh) it->second = alive(*pid);
    if (!it->second) stale[e.group].push_back(std::move(e));
  }

  StaleCleanup c;
  for (auto& [group, events] : stale) {
    bool all = true;
    for (const auto& e : events) {
      int rc = remove_event(path, e);
      if (rc == 0) {
        ++c.removed_events;
      } else if (rc == ENOENT) {
        // Another uprof starting at the same time removed it first.
      } else if (rc == EBUSY) {
        all = false;
        c.busy_events.push_back(e.group + "/" + e.name);
      } else {
        return err("attach: removing the stale probe ", e.group, "/", e.name, " from ", path, ": ",
                   std::strerror(rc));
      }
    }
    if (all) c.removed_groups.push_back(group);
  }
  return c;
}

std::vector<std::string> describe_cleanup(const StaleCleanup& c, const std::string& tracefs_dir) {
  std::vector<std::string> lines;
  for (const auto& g : c.removed_groups)
    lines.push_back("removed the tracefs probes of " + g + ", left by a uprof that is gone (killed?)");
  for (const auto& e : c.busy_events)
    lines.push_back("the stale tracefs probe " + e + " is still in use (EBUSY): left in place; once its user " +
                    "has closed it, remove it with: echo '-:" + e + "' >> " + tracefs_dir + "/uprobe_events");
  return lines;
}

}  // namespace uprof
