#include "uprof/resolve/find/library_search.h"

#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <set>
#include <utility>

#include "uprof/resolve/find/ld_so_cache.h"

namespace uprof {
namespace {

namespace fs = std::filesystem;

// One object of the simulated link map: what the loader remembers about a
// loaded file to resolve the DT_NEEDED entries it brings in.
struct LoadedObject {
  std::string origin;  // $ORIGIN: absolute directory of the file, "/opt/app/lib"
  std::vector<std::string> needed;
  std::string rpath;
  std::string runpath;
  int loader = -1;     // index of the object whose DT_NEEDED loaded this one
};

struct FileId {
  dev_t dev;
  ino_t ino;
  auto operator<=>(const FileId&) const = default;
};

std::optional<FileId> file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

// glibc takes $ORIGIN from the name the object was loaded by, made absolute
// (symlinks are not resolved): "./uselib" run in /work gives "/work".
std::string origin_of(const std::string& path) {
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) abs = path;
  std::string dir = abs.lexically_normal().parent_path().string();
  return dir.empty() ? "/" : dir;
}

bool is_ident_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// "$ORIGIN/../lib" with origin "/opt/app/bin" -> "/opt/app/bin/../lib".
// nullopt for any other token ("$LIB/x"): the loader drops such elements too.
std::optional<std::string> expand_origin(std::string_view elem, const std::string& origin) {
  std::string out;
  for (std::size_t i = 0; i < elem.size();) {
    if (elem[i] != '$') {
      out += elem[i++];
      continue;
    }
    std::string_view rest = elem.substr(i + 1);
    if (rest.starts_with("{ORIGIN}")) {
      out += origin;
      i += 1 + 8;
    } else if (rest.starts_with("ORIGIN") && (rest.size() == 6 || !is_ident_char(rest[6]))) {
      out += origin;
      i += 1 + 6;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

// A DT_RPATH/DT_RUNPATH value "$ORIGIN:/opt/lib" as directories. Empty elements
// (which would mean the loader's current directory, not ours) are skipped.
std::vector<std::string> split_search_path(std::string_view list, const std::string& origin) {
  std::vector<std::string> dirs;
  while (!list.empty()) {
    std::size_t colon = list.find(':');
    std::string_view elem = list.substr(0, colon);
    list = colon == std::string_view::npos ? std::string_view{} : list.substr(colon + 1);
    if (elem.empty()) continue;
    if (auto d = expand_origin(elem, origin)) dirs.push_back(std::move(*d));
  }
  return dirs;
}

std::string join_path(const std::string& dir, std::string_view name) {
  if (!dir.empty() && dir.back() == '/') return dir + std::string(name);
  return dir + "/" + std::string(name);
}

// Opens `path` only if it is a regular file of the wanted architecture; the
// loader likewise skips a 32-bit or foreign libc.so.6 and keeps searching.
std::optional<ElfFile> open_for_arch(const std::string& path, Arch arch) {
  if (!file_id(path)) return std::nullopt;
  auto f = ElfFile::open(path);
  if (!f || f->arch() != arch) return std::nullopt;
  return std::move(f).value();
}

// The loader's search, fed with the target's architecture, one parsed
// ld.so.cache and the default directories.
class Searcher {
 public:
  Searcher(Arch arch, const LibrarySearchOptions& opts) : arch_(arch) {
    dirs_ = opts.default_dirs.empty() ? default_library_dirs(arch) : opts.default_dirs;
    auto cache = read_ld_so_cache(opts.ld_so_cache);
    if (!cache) {
      cache_error_ = cache.error().message;
      return;
    }
    // Plain entries before glibc-hwcaps variants: the plain one always exists
    // and is what ldd shows on a CPU without the optional ISA level.
    for (int pass = 0; pass < 2; pass++)
      for (auto& e : *cache)
        if (ld_cache_entry_matches(e, arch) && (e.hwcap == 0) == (pass == 0)) cache_.push_back(e);
  }

  Arch arch() const { return arch_; }
  const std::vector<LdCacheEntry>& cache() const { return cache_; }
  const std::string& cache_error() const { return cache_error_; }
  const std::vector<std::string>& dirs() const { return dirs_; }

  // Where the DT_NEEDED `name` of objs[who] is found, and the opened file.
  std::optional<std::pair<std::string, ElfFile>> find(const std::string& name,
                                                      const std::vector<LoadedObject>& objs,
                                                      int who) const {
    if (name.find('/') != std::string::npos) return try_path(name);
    const LoadedObject& req = objs[static_cast<std::size_t>(who)];
    // DT_RPATH of the requester and then of each object up its loader chain,
    // all skipped when the requester has DT_RUNPATH; an object's DT_RPATH is
    // ignored when that object also has DT_RUNPATH.
    if (req.runpath.empty()) {
      for (int i = who; i >= 0; i = objs[static_cast<std::size_t>(i)].loader) {
        const LoadedObject& o = objs[static_cast<std::size_t>(i)];
        if (!o.runpath.empty()) continue;
        for (auto& d : split_search_path(o.rpath, o.origin))
          if (auto r = try_path(join_path(d, name))) return r;
      }
    }
    for (auto& d : split_search_path(req.runpath, req.origin))
      if (auto r = try_path(join_path(d, name))) return r;
    for (auto& e : cache_)
      if (e.soname == name)
        if (auto r = try_path(e.path)) return r;
    for (auto& d : dirs_)
      if (auto r = try_path(join_path(d, name))) return r;
    return std::nullopt;
  }

  std::optional<std::pair<std::string, ElfFile>> try_path(const std::string& path) const {
    auto f = open_for_arch(path, arch_);
    if (!f) return std::nullopt;
    return std::make_pair(path, std::move(*f));
  }

 private:
  Arch arch_;
  std::vector<std::string> dirs_;
  std::vector<LdCacheEntry> cache_;
  std::string cache_error_;
};

LoadedObject loaded_object(const ElfFile& f, const std::string& path, int loader) {
  DynamicInfo d = f.dynamic();
  return LoadedObject{origin_of(path), std::move(d.needed), std::move(d.rpath),
                      std::move(d.runpath), loader};
}

// Breadth-first over DT_NEEDED like _dl_map_object_deps: objects are appended
// as they are found and each one's needs are handled in turn, so a library
// needed twice is loaded (and listed) once, where first needed.
std::vector<NeededLibrary> resolve_needed(const ElfFile& target, const Searcher& s) {
  std::vector<NeededLibrary> out;
  std::vector<LoadedObject> objs;
  std::set<std::string> names;  // DT_NEEDED strings and sonames already loaded
  std::set<FileId> files;       // the same file reached by two names loads once

  objs.push_back(loaded_object(target, target.path(), -1));
  DynamicInfo td = target.dynamic();
  if (!td.soname.empty()) names.insert(td.soname);
  if (auto id = file_id(target.path())) files.insert(*id);

  // The program interpreter is mapped before anything else, so libc's need of
  // "ld-linux-x86-64.so.2" is met by /lib64/ld-linux-x86-64.so.2 whatever the
  // search path says (ldd shows it the same way).
  std::string interp_soname;
  if (!td.interp.empty()) {
    if (auto f = open_for_arch(td.interp, target.arch())) {
      interp_soname = f->dynamic().soname;
      if (interp_soname.empty()) interp_soname = fs::path(td.interp).filename().string();
    }
  }

  for (std::size_t i = 0; i < objs.size(); i++) {
    std::vector<std::string> needed = objs[i].needed;  // objs grows below
    for (auto& name : needed) {
      if (!names.insert(name).second) continue;
      NeededLibrary lib{name, ""};
      if (!interp_soname.empty() && (name == interp_soname || name == td.interp)) {
        lib.path = td.interp;
      } else if (auto found = s.find(name, objs, static_cast<int>(i))) {
        auto& [path, file] = *found;
        lib.path = path;
        std::string soname = file.dynamic().soname;
        if (!soname.empty()) names.insert(soname);
        auto id = file_id(path);
        if (!id || files.insert(*id).second)
          objs.push_back(loaded_object(file, path, static_cast<int>(i)));
      }
      out.push_back(std::move(lib));
    }
  }
  return out;
}

struct Candidate {
  std::string soname;
  std::string path;
  bool exact = false;
};

// Keeps the exact matches if there are any, then one candidate per file (the
// first, in search order): libz3.so.4 and its dev symlink libz3.so are one library.
std::vector<Candidate> best_candidates(std::vector<Candidate> all) {
  bool any_exact = false;
  for (auto& c : all) any_exact |= c.exact;
  std::vector<Candidate> out;
  std::set<FileId> seen;
  std::set<std::string> seen_unresolved;
  for (auto& c : all) {
    if (any_exact && !c.exact) continue;
    if (c.path.empty()) {
      if (seen_unresolved.insert(c.soname).second) out.push_back(c);
      continue;
    }
    auto id = file_id(c.path);
    if (!id || seen.insert(*id).second) out.push_back(c);
  }
  return out;
}

std::string list_candidates(const std::vector<Candidate>& cs) {
  std::string s;
  for (auto& c : cs) {
    if (!s.empty()) s += ", ";
    s += c.soname + " (" + (c.path.empty() ? "not found" : c.path) + ")";
  }
  return s;
}

bool starts_with_then_dot_or_end(std::string_view s, std::string_view prefix) {
  return s.starts_with(prefix) && (s.size() == prefix.size() || s[prefix.size()] == '.');
}

// ld.so.cache's entries for `name`, of the searcher's architecture, that exist.
std::vector<Candidate> cache_candidates(const Searcher& s, std::string_view name) {
  std::vector<Candidate> from_cache;
  for (auto& e : s.cache())
    if (library_name_matches(e.soname, name) && file_id(e.path))
      from_cache.push_back({e.soname, e.path, e.soname == name});
  return best_candidates(std::move(from_cache));
}

}  // namespace

std::vector<std::string> default_library_dirs(Arch arch) {
  const std::string triplet(arch_info(arch).multiarch_triplet);
  return {"/lib/" + triplet, "/usr/lib/" + triplet, "/lib64", "/usr/lib64", "/lib", "/usr/lib"};
}

bool library_name_matches(std::string_view soname, std::string_view name) {
  if (name.empty()) return false;
  if (soname == name) return true;
  std::string with_so = std::string(name) + ".so";
  if (starts_with_then_dot_or_end(soname, with_so)) return true;          // libc -> libc.so.6
  if (starts_with_then_dot_or_end(soname, "lib" + with_so)) return true;  // c -> libc.so.6
  // An unversioned or partly versioned soname: libc.so -> libc.so.6, libfoo.so.1 -> libfoo.so.1.2
  bool has_so = name.ends_with(".so") || name.find(".so.") != std::string_view::npos;
  return has_so && starts_with_then_dot_or_end(soname, name);
}

std::vector<NeededLibrary> needed_libraries(const ElfFile& target, const LibrarySearchOptions& opts) {
  return resolve_needed(target, Searcher(target.arch(), opts));
}

Result<std::string> find_library(const ElfFile& target, std::string_view name,
                                 const LibrarySearchOptions& opts) {
  if (name.empty()) return err("spec: empty library name for ", target.path());
  if (name.find('/') != std::string_view::npos) {
    std::error_code ec;
    if (fs::exists(fs::path(name), ec)) return std::string(name);
    return err("spec: library '", name, "' does not exist");
  }

  Searcher s(target.arch(), opts);
  auto ambiguous = [&](const std::vector<Candidate>& cs) {
    return err("spec: library '", name, "' is ambiguous for ", target.path(), ": ",
               list_candidates(cs), "; give the soname or a path");
  };

  // 1. The libraries the program actually loads.
  std::vector<Candidate> from_needed;
  for (auto& lib : resolve_needed(target, s))
    if (library_name_matches(lib.soname, name))
      from_needed.push_back({lib.soname, lib.path, lib.soname == name});
  if (!from_needed.empty()) {
    auto cs = best_candidates(std::move(from_needed));
    std::vector<Candidate> resolved;
    for (auto& c : cs)
      if (!c.path.empty()) resolved.push_back(c);
    if (resolved.size() == 1) return resolved[0].path;
    if (resolved.size() > 1) return ambiguous(resolved);
    std::string dirs;
    for (auto& d : opts.default_dirs.empty() ? default_library_dirs(s.arch()) : opts.default_dirs)
      dirs += (dirs.empty() ? "" : ", ") + d;
    return err("spec: library '", name, "' is ", cs[0].soname, ", which ", target.path(),
               " needs, but no ", arch_info(s.arch()).name,
               " file for it was found (looked in its DT_RPATH/DT_RUNPATH, ", opts.ld_so_cache,
               ", ", dirs, ")");
  }

  // 2. Anything ldconfig knows for this architecture.
  auto cs = cache_candidates(s, name);
  if (cs.size() == 1) return cs[0].path;
  if (cs.size() > 1) return ambiguous(cs);

  if (!s.cache_error().empty())
    return err("spec: library '", name, "' not found for ", target.path(),
               " (looked in its DT_NEEDED libraries; could not read ", s.cache_error(), ")");
  return err("spec: library '", name, "' not found for ", target.path(),
             " (looked in its DT_NEEDED libraries and ", opts.ld_so_cache, ")");
}

Result<std::string> find_system_library(std::string_view name, Arch arch, const LibrarySearchOptions& opts) {
  if (name.empty()) return err("spec: empty library name");
  if (name.find('/') != std::string_view::npos) {
    std::error_code ec;
    if (fs::exists(fs::path(name), ec)) return std::string(name);
    return err("spec: library '", name, "' does not exist");
  }
  Searcher s(arch, opts);
  auto cs = cache_candidates(s, name);
  if (cs.size() == 1) return cs[0].path;
  if (cs.size() > 1)
    return err("spec: library '", name, "' is ambiguous: ", list_candidates(cs), "; give the soname or a path");
  // Not in the cache: an exact soname in the default directories, as the loader looks last.
  for (const auto& dir : s.dirs())
    if (auto f = open_for_arch(join_path(dir, name), arch)) return join_path(dir, name);
  if (!s.cache_error().empty())
    return err("spec: library '", name, "' not found (could not read ", s.cache_error(), ")");
  std::string dirs;
  for (const auto& d : s.dirs()) dirs += (dirs.empty() ? "" : ", ") + d;
  return err("spec: library '", name, "' not found for ", arch_info(arch).name, " (looked in ", opts.ld_so_cache,
             " and ", dirs, ")");
}

}  // namespace uprof
