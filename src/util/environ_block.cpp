#include "uprof/util/environ_block.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace uprof {

std::optional<std::string> environ_value(std::string_view block, std::string_view name) {
  while (!block.empty()) {
    const std::size_t end = block.find('\0');
    const std::string_view entry = block.substr(0, end);
    block = end == std::string_view::npos ? std::string_view{} : block.substr(end + 1);
    if (entry.size() > name.size() && entry.substr(0, name.size()) == name && entry[name.size()] == '=')
      return std::string(entry.substr(name.size() + 1));
  }
  return std::nullopt;
}

Result<std::string> read_environ(int pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/environ";
  std::ifstream in(path, std::ios::binary);
  if (!in) return err("process ", pid, ": ", path, ": ", std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace uprof
