#include "uprof/record/private_libraries.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "uprof/resolve/elf/elf_file.h"
#include "uprof/resolve/find/library_search.h"
#include "uprof/util/self_exe.h"

namespace uprof {

namespace {

bool same_file(const MapsEntry& a, const MapsEntry& b) {
  return a.inode == b.inode && a.dev_major == b.dev_major && a.dev_minor == b.dev_minor;
}

}  // namespace

std::vector<MapsEntry> own_files_named(const std::vector<std::string>& objects, const std::vector<MapsEntry>& own) {
  std::vector<MapsEntry> files;  // each mapped file once
  for (const MapsEntry& m : own) {
    if (!m.file_backed() || !m.executable()) continue;
    bool seen = false;
    for (const MapsEntry& f : files) seen |= same_file(f, m);
    if (!seen) files.push_back(m);
  }
  std::vector<MapsEntry> out;
  for (const MapsEntry& f : files) {
    std::string soname;
    bool named = false;
    for (const std::string& object : objects) {
      if (object.empty()) continue;
      if (object.find('/') != std::string::npos) {
        struct stat st {};
        named |= ::stat(object.c_str(), &st) == 0 && st.st_ino == f.inode && major(st.st_dev) == f.dev_major &&
                 minor(st.st_dev) == f.dev_minor;
        continue;
      }
      if (soname.empty()) {
        auto elf = ElfFile::open(f.path);
        soname = elf && !elf->dynamic().soname.empty() ? elf->dynamic().soname
                                                       : std::filesystem::path(f.path).filename().string();
      }
      named |= library_name_matches(soname, object);
    }
    if (named) out.push_back(f);
  }
  return out;
}

std::vector<std::string> private_libraries_argv(const std::string& loader, const std::string& dir,
                                                const std::vector<PrivateCopy>& copies, const std::string& exe,
                                                const std::vector<std::string>& args) {
  std::string run_loader = loader;
  for (const PrivateCopy& c : copies)
    if (c.loader) run_loader = dir + "/" + c.name;
  std::vector<std::string> argv{run_loader, "--library-path", dir, "--argv0", "uprof", exe};
  for (std::size_t i = 0; i < args.size(); i++) {
    argv.push_back(args[i]);
    if (i == 0) {
      argv.push_back("--private-libs");
      argv.push_back(dir);
    }
  }
  return argv;
}

Status run_on_private_libraries(const std::vector<MapsEntry>& files, const std::vector<std::string>& args) {
  const std::string exe = self_exe();
  UPROF_ASSIGN(ElfFile self, ElfFile::open(exe));
  const std::string loader = self.dynamic().interp;
  if (loader.empty()) return err("private libraries: ", exe, " names no dynamic loader (PT_INTERP)");
  struct stat loader_st {};
  if (::stat(loader.c_str(), &loader_st) != 0)
    return err("private libraries: ", loader, ": ", std::strerror(errno));

  std::error_code ec;
  std::string dir = (std::filesystem::temp_directory_path(ec) / "uprof-libs-XXXXXX").string();
  if (ec || !::mkdtemp(dir.data())) return err("private libraries: cannot make a directory like ", dir);
  auto give_up = [&](Error e) {
    std::filesystem::remove_all(dir, ec);
    return e;
  };
  std::vector<PrivateCopy> copies;
  for (const MapsEntry& m : files) {
    PrivateCopy c{.source = m.path, .name = std::filesystem::path(m.path).filename().string(), .loader = false};
    c.loader = m.inode == loader_st.st_ino && m.dev_major == major(loader_st.st_dev) &&
               m.dev_minor == minor(loader_st.st_dev);
    if (m.path == exe) continue;  // uprof's own program: not a library to copy
    if (!c.loader) {
      auto elf = ElfFile::open(m.path);
      if (!elf) return give_up(elf.error());
      if (std::string soname = elf->dynamic().soname; !soname.empty()) c.name = soname;
    }
    if (!std::filesystem::copy_file(m.path, dir + "/" + c.name, ec))
      return give_up(err("private libraries: copying ", m.path, " into ", dir, ": ", ec.message()));
    copies.push_back(std::move(c));
  }
  if (copies.empty()) return give_up(err("private libraries: nothing to copy"));
  const std::vector<std::string> argv = private_libraries_argv(loader, dir, copies, exe, args);
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  ::setenv(kSelfExeEnv, exe.c_str(), 1);
  ::execv(cargv[0], cargv.data());
  const int e = errno;
  ::unsetenv(kSelfExeEnv);
  return give_up(err("private libraries: exec ", argv[0], ": ", std::strerror(e)));
}

}  // namespace uprof
