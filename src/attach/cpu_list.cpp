#include "uprof/attach/cpu_list.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace uprof {
namespace {

// The kernel has at most 8192 CPUs (CONFIG_NR_CPUS); a bigger number is garbage.
constexpr int kMaxCpu = 8191;

std::optional<int> parse_cpu(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < 0 || v > kMaxCpu)
    return std::nullopt;
  return v;
}

}  // namespace

Result<std::vector<int>> parse_cpu_list(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.empty()) return err("attach: empty CPU list");
  std::vector<int> cpus;
  std::string_view rest = text;
  for (bool more = true; more;) {
    auto comma = rest.find(',');
    more = comma != std::string_view::npos;
    std::string_view item = rest.substr(0, comma);
    rest = more ? rest.substr(comma + 1) : std::string_view{};
    auto dash = item.find('-');
    auto lo = parse_cpu(item.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : parse_cpu(item.substr(dash + 1));
    if (!lo || !hi || *lo > *hi)
      return err("attach: CPU list '", text, "': bad item '", item, "'");
    for (int c = *lo; c <= *hi; ++c) cpus.push_back(c);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

Result<std::vector<int>> read_online_cpus(const std::string& path) {
  std::ifstream in(path);
  if (!in) return err("attach: cannot read ", path, ": ", std::strerror(errno));
  std::ostringstream os;
  os << in.rdbuf();
  auto cpus = parse_cpu_list(os.str());
  if (!cpus) return err(cpus.error().message, " (from ", path, ")");
  return cpus;
}

}  // namespace uprof
