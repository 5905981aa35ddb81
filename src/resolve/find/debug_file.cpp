#include "uprof/resolve/find/debug_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
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

std::string hex32(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

// The binary's directory as gdb takes it: absolute, symlinks resolved
// ("./bin/../bin/prog" -> "/home/me/bin").
std::string binary_dir(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) p = fs::absolute(path, ec).lexically_normal();
  return p.parent_path().string();
}

}  // namespace

std::vector<std::string> debuglink_candidates(const std::string& dir, const std::string& link,
                                              const std::vector<std::string>& debug_dirs) {
  std::vector<std::string> out{dir + "/" + link, dir + "/.debug/" + link};
  // gdb's two layouts of a debug directory: the binary's path mirrored under it
  // (/usr/lib/debug/usr/bin/ls.debug), and the debug files side by side (DIR/ls.debug).
  for (const auto& d : debug_dirs) out.push_back(d + dir + "/" + link);
  for (const auto& d : debug_dirs) out.push_back(d + "/" + link);
  std::vector<std::string> unique;
  for (auto& c : out) {
    std::string norm = std::filesystem::path(c).lexically_normal().string();
    if (std::find(unique.begin(), unique.end(), norm) == unique.end()) unique.push_back(std::move(norm));
  }
  return unique;
}

DebugFileLookup find_debug_file(const ElfFile& bin, const DebugSearch& search) {
  namespace fs = std::filesystem;
  DebugFileLookup out;
  // Why `cand` is not bin's debug file, or "" when it is.
  auto refuse_reason = [&](const std::string& cand, bool by_link) -> std::string {
    auto dbg = ElfFile::open(cand);
    if (!dbg) return dbg.error().message;
    if (!bin.build_id().empty() && !dbg->build_id().empty()) {
      if (bin.build_id() != dbg->build_id()) return "build-id " + dbg->build_id() + " differs from " + bin.build_id();
      return "";
    }
    if (!by_link) return "it has no build-id";
    if (bin.debuglink()) {
      auto crc = file_crc(cand);
      if (!crc) return "cannot read it";
      if (*crc != bin.debuglink()->crc)
        return "CRC-32 " + hex32(*crc) + " does not match " + hex32(bin.debuglink()->crc) + " in " + bin.path() +
               "'s .gnu_debuglink";
    }
    return "";
  };
  auto accept = [&](const std::string& cand, bool by_link) -> bool {
    std::error_code ec;
    if (!fs::is_regular_file(cand, ec) || fs::equivalent(cand, bin.path(), ec)) {
      out.looked_in.push_back(cand);
      return false;
    }
    std::string why = refuse_reason(cand, by_link);
    if (!why.empty()) {
      out.looked_in.push_back(cand + " (" + why + ")");
      out.rejected.push_back(cand + ": " + why);
      return false;
    }
    out.looked_in.push_back(cand);
    out.path = cand;
    return true;
  };

  const std::string& id = bin.build_id();
  if (id.size() > 2) {
    for (const auto& d : search.debug_dirs)
      if (accept(d + "/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug", false)) return out;
  }
  if (bin.debuglink()) {
    for (const auto& c : debuglink_candidates(binary_dir(bin.path()), bin.debuglink()->file, search.debug_dirs))
      if (accept(c, true)) return out;
  }

  std::string urls = search.debuginfod ? debuginfod_urls() : "";
  if (urls.empty() || id.empty()) return out;
  DebuginfodQuery q{.binary = bin.path(), .build_id = id};
  auto got = debuginfod_find_debuginfo(q, search.listener);
  if (!got) {
    std::string why = got.error().message;
    if (std::string prefix = debuginfod_error_prefix(q); why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
    out.looked_in.push_back("debuginfod " + urls + " (" + why + ")");
    return out;
  }
  // The cache path is named by build-id, not by what is in it: check it as any other.
  out.looked_in.push_back("debuginfod " + urls);
  if (std::string why = refuse_reason(got->path, false); !why.empty()) {
    out.looked_in.back() += " (" + got->path + ": " + why + ")";
    out.rejected.push_back(got->path + ": " + why);
    return out;
  }
  out.path = got->path;
  out.debuginfod = std::move(got).value();
  return out;
}

}  // namespace uprof
