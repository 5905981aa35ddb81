#include "uprof/util/proc_maps.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace uprof {
namespace {

template <class T>
bool parse_hex(std::string_view s, T& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

}  // namespace

std::vector<MapsEntry> parse_maps(std::string_view maps) {
  std::vector<MapsEntry> out;
  while (!maps.empty()) {
    const std::size_t nl = maps.find('\n');
    const std::string_view line = maps.substr(0, nl);
    maps = nl == std::string_view::npos ? std::string_view{} : maps.substr(nl + 1);
    std::string_view field[5];
    std::size_t n = 0, i = 0;
    for (; n < 5; n++) {  // the first five fields; the path is the rest
      while (i < line.size() && line[i] == ' ') i++;
      std::size_t j = line.find(' ', i);
      if (j == std::string_view::npos) j = line.size();
      if (j == i) break;
      field[n] = line.substr(i, j - i);
      i = j;
    }
    if (n < 5) continue;
    while (i < line.size() && line[i] == ' ') i++;
    MapsEntry e;
    const std::size_t dash = field[0].find('-'), colon = field[3].find(':');
    if (dash == std::string_view::npos || colon == std::string_view::npos || !parse_hex(field[0].substr(0, dash), e.start) ||
        !parse_hex(field[0].substr(dash + 1), e.end) || !parse_hex(field[2], e.offset) ||
        !parse_hex(field[3].substr(0, colon), e.dev_major) || !parse_hex(field[3].substr(colon + 1), e.dev_minor))
      continue;
    auto [p, ec] = std::from_chars(field[4].data(), field[4].data() + field[4].size(), e.inode);
    if (ec != std::errc()) continue;
    e.perms = std::string(field[1]);
    e.path = std::string(line.substr(i));
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<MapsEntry> read_maps(int pid) {
  std::ifstream in(pid > 0 ? "/proc/" + std::to_string(pid) + "/maps" : std::string("/proc/self/maps"));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_maps(ss.str());
}

}  // namespace uprof
