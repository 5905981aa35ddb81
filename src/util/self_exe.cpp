#include "uprof/util/self_exe.h"

#include <cstdlib>
#include <filesystem>

namespace uprof {
namespace {
std::string& adopted() {
  static std::string path;
  return path;
}
}  // namespace

void adopt_self_exe_from_env() {
  if (const char* p = std::getenv(kSelfExeEnv)) {
    adopted() = p;
    ::unsetenv(kSelfExeEnv);
  }
}

std::string self_exe() {
  if (!adopted().empty()) return adopted();
  std::error_code ec;
  std::string p = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  return ec ? std::string("/proc/self/exe") : p;
}

}  // namespace uprof
