#include "uprof/resolve/debug_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "uprof/util/crc32.h"
#include "uprof/util/unique_fd.h"

namespace uprof {
namespace {

std::optional<uint32_t> file_crc(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  uint32_t crc = 0;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    crc = crc32_update(crc, buf, static_cast<std::size_t>(n));
  }
  return crc;
}

}  // namespace

DebugFileLookup find_debug_file(const ElfFile& bin, const DebugSearch& search) {
  namespace fs = std::filesystem;
  DebugFileLookup out;
  auto accept = [&](const std::string& cand, bool by_link) -> bool {
    out.looked_in.push_back(cand);
    std::error_code ec;
    if (!fs::is_regular_file(cand, ec)) return false;
    if (fs::equivalent(cand, bin.path(), ec)) return false;
    auto dbg = ElfFile::open(cand);
    if (!dbg) {
      out.rejected.push_back(dbg.error().message);
      return false;
    }
    if (!bin.build_id().empty() && !dbg->build_id().empty()) {
      if (bin.build_id() != dbg->build_id()) {
        out.rejected.push_back(cand + ": build-id " + dbg->build_id() + " differs from " + bin.build_id());
        return false;
      }
    } else if (by_link && bin.debuglink()) {
      auto crc = file_crc(cand);
      if (!crc || *crc != bin.debuglink()->crc) {
        out.rejected.push_back(cand + ": CRC does not match the debuglink");
        return false;
      }
    }
    out.path = cand;
    return true;
  };

  const std::string& id = bin.build_id();
  if (id.size() > 2) {
    for (const auto& d : search.debug_dirs)
      if (accept(d + "/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug", false)) return out;
  }
  if (bin.debuglink()) {
    std::error_code ec;
    fs::path abs = fs::absolute(bin.path(), ec);
    std::string dir = abs.parent_path().string();
    const std::string& link = bin.debuglink()->file;
    std::vector<std::string> cands{dir + "/" + link, dir + "/.debug/" + link};
    for (const auto& d : search.debug_dirs) cands.push_back(d + dir + "/" + link);
    for (const auto& c : cands)
      if (accept(c, true)) return out;
  }
  return out;
}

}  // namespace uprof
