#include "uprof/util/file_path.h"

#include <cctype>
#include <filesystem>

namespace uprof {
namespace {

// "/proc/4242/root/usr/bin/app", "/proc/4242/map_files/...", "/proc/4242/exe".
bool through_another_view(const std::string& path) {
  constexpr std::string_view kProc = "/proc/";
  if (path.compare(0, kProc.size(), kProc) != 0) return false;
  std::size_t i = kProc.size();
  if (i >= path.size() || !std::isdigit(static_cast<unsigned char>(path[i]))) return false;
  while (i < path.size() && std::isdigit(static_cast<unsigned char>(path[i]))) i++;
  const std::string rest = path.substr(i);
  return rest.rfind("/root/", 0) == 0 || rest.rfind("/map_files/", 0) == 0 || rest == "/exe";
}

}  // namespace

std::string canonical_path(const std::string& path) {
  if (through_another_view(path)) return path;
  std::error_code ec;
  auto canon = std::filesystem::canonical(path, ec);
  return ec ? path : canon.string();
}

}  // namespace uprof
