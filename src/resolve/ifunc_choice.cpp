#include "uprof/resolve/ifunc_choice.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <grp.h>
#include <link.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <map>
#include <sstream>

#include "uprof/resolve/elf/pointer_relocs.h"
#include "uprof/spec/probe_spec.h"
#include "uprof/util/environ_block.h"
#include "uprof/util/hex.h"
#include "uprof/util/proc_maps.h"
#include "uprof/util/sudo_user.h"
#include "uprof/util/unique_fd.h"

namespace uprof {
namespace {

// How long the loader may take in the helper: loading a library and running its
// constructors takes milliseconds; a constructor that blocks must not hang uprof.
constexpr int kHelperTimeoutMs = 10'000;

void write_all(int fd, const std::string& s) {
  for (std::size_t done = 0; done < s.size();) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// Makes the helper `user` for good before any of the file's code runs: no
// supplementary groups, real, effective and saved ids all the user's (a uid other than
// 0 loses every capability at setresuid), no capability left in any set, and no way to
// gain one back (PR_SET_NO_NEW_PRIVS: no setuid program, no file capability). Checked
// after: setuid(0) must fail. The reason on failure; then nothing of the file runs.
std::optional<std::string> drop_privileges(const UserIds& user) {
  auto failed = [](const char* what) { return std::string(what) + ": " + std::strerror(errno); };
  if (::getuid() == 0 || ::geteuid() == 0) {
    for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
      if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return failed("PR_CAPBSET_DROP");
    if (::setgroups(0, nullptr) != 0) return failed("setgroups");
    if (::setresgid(user.gid, user.gid, user.gid) != 0) return failed("setresgid");
    if (::setresuid(user.uid, user.uid, user.uid) != 0) return failed("setresuid");
  }
  // A uprof that is not root may still hold file capabilities (cap_perfmon, cap_bpf).
  __user_cap_header_struct head{.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capset, &head, none) != 0) return failed("capset");
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    return failed("PR_CAP_AMBIENT_CLEAR_ALL");
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return failed("PR_SET_NO_NEW_PRIVS");
  __user_cap_data_struct left[_LINUX_CAPABILITY_U32S_3] = {};
  uid_t r = 0, e = 0, saved = 0;
  if (::getresuid(&r, &e, &saved) != 0 || r == 0 || e == 0 || saved == 0) return std::string("still uid 0");
  if (::syscall(SYS_capget, &head, left) != 0 || left[0].effective || left[0].permitted || left[1].effective ||
      left[1].permitted)
    return std::string("capabilities remain");
  if (::setuid(0) == 0) return std::string("setuid(0) succeeded after the drop");
  return std::nullopt;
}

// The helper process: one line per query on `out`, "at VADDR", "none WHY" or "other
// PATH"; or one line when nothing of the library ran: "fail WHY" (it does not load),
// "unreadable WHY" (`user` cannot read it), "nodrop WHY" (the helper could not become
// `user`). Its own output goes to /dev/null: a library's constructor may print.
[[noreturn]] void answer_in_child(int out, const std::string& path, const std::vector<IfuncQuery>& queries,
                                  const UserIds& user) {
  if (int null = ::open("/dev/null", O_WRONLY); null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
  }
  if (auto why = drop_privileges(user)) {
    write_all(out, "nodrop " + *why + "\n");
    ::_exit(0);
  }
  // As `user` now: access(2) checks the real uid, which is theirs too.
  if (::access(path.c_str(), R_OK) != 0) {
    write_all(out, std::string("unreadable ") + std::strerror(errno) + "\n");
    ::_exit(0);
  }
  std::string reply;
  void* handle = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  link_map* self = nullptr;
  if (!handle || ::dlinfo(handle, RTLD_DI_LINKMAP, &self) != 0 || !self) {
    const char* why = ::dlerror();
    reply = std::string("fail ") + (why ? why : "dlopen failed") + "\n";
  } else {
    for (const IfuncQuery& q : queries) {
      ::dlerror();
      // dlsym runs the IFUNC's resolver, as binding a reference does.
      void* impl = q.version.empty() ? ::dlsym(handle, q.name.c_str())
                                     : ::dlvsym(handle, q.name.c_str(), q.version.c_str());
      if (!impl) {
        const char* why = ::dlerror();
        reply += std::string("none ") + (why ? why : "no such symbol") + "\n";
        continue;
      }
      Dl_info info{};
      void* owner = nullptr;
      if (::dladdr1(impl, &info, &owner, RTLD_DL_LINKMAP) != 0 && owner && owner != self) {
        const char* name = static_cast<link_map*>(owner)->l_name;
        reply += std::string("other ") + (name && *name ? name : "?") + "\n";
        continue;
      }
      reply += "at " + hex(reinterpret_cast<uint64_t>(impl) - self->l_addr) + "\n";
    }
  }
  write_all(out, reply);
  ::_exit(0);
}

// Reads everything the helper writes, for at most kHelperTimeoutMs; nullopt on timeout.
std::optional<std::string> read_reply(int fd) {
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kHelperTimeoutMs);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return std::nullopt;
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return text;
    text.append(buf, static_cast<std::size_t>(n));
  }
}

// The load bias of a file a process maps, from a mapping of its code: an executable
// mapping at file offset O lies in the PF_X PT_LOAD whose pages hold O, so it starts at
// bias + that segment's page-aligned address + (O - its page-aligned offset). libc:
//   7f1c2a228000-7f1c2a3bd000 r-xp 00028000 ...   PT_LOAD R E at 0x28000, offset 0x28000
//   -> bias 0x7f1c2a200000. Only executable mappings count: a read-only mapping of the
// same file at offset 0 may be anyone's mmap of it (libelf's, in uprof's own process).
std::optional<uint64_t> load_bias(const std::vector<const MapsEntry*>& entries, const ElfFile& elf) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  for (const MapsEntry* m : entries) {
    if (!m->executable()) continue;
    for (const LoadSegment& s : elf.loads()) {
      const uint64_t off_page = s.offset & ~(page - 1);
      if (s.executable && m->offset >= off_page && m->offset < s.offset + s.filesz)
        return m->start - ((s.vaddr & ~(page - 1)) + (m->offset - off_page));
    }
  }
  return std::nullopt;
}

struct FileId {
  uint32_t major, minor;
  uint64_t inode;
  auto operator<=>(const FileId&) const = default;
};

}  // namespace

Result<std::vector<uint64_t>> ask_loader(const ElfFile& lib, const std::vector<IfuncQuery>& queries) {
  const std::string& path = lib.path();
  if (lib.arch() != host_arch())
    return err("ifunc: ", path, ": an ", arch_info(lib.arch()).name, " file: which implementation its loader selects "
               "cannot be asked on this ", arch_info(host_arch()).name, " machine");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return err("ifunc: pipe: ", std::strerror(errno));
  UniqueFd in(fds[0]), out(fds[1]);
  // Looked up here: the password database is not safe to read in a forked child.
  const UserIds user = unprivileged_user();
  const pid_t child = ::fork();
  if (child < 0) return err("ifunc: fork: ", std::strerror(errno));
  if (child == 0) answer_in_child(out.get(), path, queries, user);
  out.reset();
  const std::optional<std::string> reply = read_reply(in.get());
  if (!reply) ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string what = "the helper process that asked the loader which implementation '" + queries.front().name +
                           "' selects";
  if (!reply) return err("ifunc: ", path, ": ", what, " took more than ", kHelperTimeoutMs / 1000, " s: killed it");
  if (WIFSIGNALED(status))
    return err("ifunc: ", path, ": ", what, " was killed by signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)),
               ") while the library loaded");

  std::vector<uint64_t> out_vaddrs;
  std::istringstream lines(*reply);
  std::string line;
  for (const IfuncQuery& q : queries) {
    if (!std::getline(lines, line)) return err("ifunc: ", path, ": ", what, " gave no answer");
    const auto space = line.find(' ');
    const std::string word = line.substr(0, space), rest = space == std::string::npos ? "" : line.substr(space + 1);
    const std::string who = "uid " + std::to_string(user.uid) + (sudo_user() ? " (the user who ran sudo)" : " (nobody)");
    if (word == "nodrop")
      return err("ifunc: ", path, ": uprof could not become ", who, " to ask the loader which implementation '", q.name,
                 "' selects (", rest, "), and runs no file's code as root: record with -p on a running process that "
                 "loaded it (its own slots are read)");
    if (word == "unreadable")
      return err("ifunc: ", path, ": ", who, ", as whom uprof asks the loader which implementation '", q.name,
                 "' selects (it runs no file's code as root), cannot read it (", rest, "): make it readable to that "
                 "user, or record with -p on a running process that loaded it (its own slots are read)");
    if (word == "fail")
      return err("ifunc: ", path, ": the loader cannot load it here to ask which implementation '", q.name, "' selects (",
                 rest, ")");
    if (word == "none") return err("ifunc: ", path, ": the loader finds no '", q.name, "' in it (", rest, ")");
    if (word == "other")
      return err("ifunc: ", path, ": '", q.name, "' resolves to a function of another file, ", rest,
                 ", which uprof does not follow: probe it there");
    auto vaddr = word == "at" ? parse_number(rest) : std::nullopt;
    if (!vaddr) return err("ifunc: ", path, ": ", what, " answered '", line, "'");
    out_vaddrs.push_back(*vaddr);
  }
  return out_vaddrs;
}

Result<std::vector<std::optional<uint64_t>>> process_choices(int pid, const ElfFile& lib,
                                                             const std::vector<IfuncQuery>& queries) {
  const std::vector<MapsEntry> maps = read_maps(pid);
  if (maps.empty()) return err("ifunc: process ", pid, ": cannot read /proc/", pid, "/maps");
  struct stat st {};
  if (::stat(lib.path().c_str(), &st) != 0) return err("ifunc: ", lib.path(), ": ", std::strerror(errno));
  const FileId lib_id{major(st.st_dev), minor(st.st_dev), st.st_ino};
  std::map<FileId, std::vector<const MapsEntry*>> files;
  for (const MapsEntry& m : maps)
    if (m.file_backed()) files[FileId{m.dev_major, m.dev_minor, m.inode}].push_back(&m);
  const auto mine = files.find(lib_id);
  const std::optional<uint64_t> lib_bias = mine == files.end() ? std::nullopt : load_bias(mine->second, lib);
  if (!lib_bias) return err("ifunc: process ", pid, " does not map ", lib.path());

  UniqueFd mem(::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC));
  if (!mem.valid()) return err("ifunc: process ", pid, ": /proc/", pid, "/mem: ", std::strerror(errno));
  // The implementation a slot points at, when it points into the library's code.
  auto implementation_at = [&](uint64_t slot) -> std::optional<uint64_t> {
    uint64_t value = 0;
    if (::pread(mem.get(), &value, sizeof value, static_cast<off_t>(slot)) != static_cast<ssize_t>(sizeof value))
      return std::nullopt;
    for (const MapsEntry* m : mine->second)
      if (m->executable() && value >= m->start && value < m->end) return value - *lib_bias;
    return std::nullopt;
  };

  std::vector<std::optional<uint64_t>> out(queries.size());
  const std::vector<PointerReloc> own = pointer_relocs(lib);
  bool all = true;
  for (std::size_t i = 0; i < queries.size(); i++) {
    for (const PointerReloc& r : own)
      if (!out[i] && r.kind == PointerReloc::Kind::Irelative && static_cast<uint64_t>(r.addend) == queries[i].resolver)
        out[i] = implementation_at(*lib_bias + r.slot);
    all = all && out[i];
  }
  if (all) return out;
  // The GOT slots that name the symbol, in every file the process maps (the library too).
  for (const auto& [id, entries] : files) {
    std::optional<ElfFile> opened;
    const ElfFile* file = &lib;
    if (id != lib_id) {
      // map_files reaches the very inode mapped, also across mount namespaces.
      char range[64];
      std::snprintf(range, sizeof range, "%lx-%lx", static_cast<unsigned long>(entries.front()->start),
                    static_cast<unsigned long>(entries.front()->end));
      auto elf = ElfFile::open("/proc/" + std::to_string(pid) + "/map_files/" + range);
      if (!elf) elf = ElfFile::open(entries.front()->path);
      if (!elf) continue;
      opened.emplace(std::move(elf).value());
      file = &*opened;
    }
    if (file->arch() != lib.arch()) continue;
    const std::optional<uint64_t> bias = load_bias(entries, *file);
    if (!bias) continue;
    for (const PointerReloc& r : pointer_relocs(*file)) {
      if (r.kind == PointerReloc::Kind::Irelative || (r.kind == PointerReloc::Kind::Abs64 && r.addend != 0)) continue;
      for (std::size_t i = 0; i < queries.size(); i++)
        if (!out[i] && queries[i].version.empty() && r.symbol == queries[i].name) out[i] = implementation_at(*bias + r.slot);
    }
  }
  return out;
}

Status same_selection_as_here(int pid) {
  constexpr const char* kTunables = "GLIBC_TUNABLES";
  auto block = read_environ(pid);
  if (!block) return err(block.error().message, ": its GLIBC_TUNABLES cannot be compared with uprof's");
  const std::optional<std::string> theirs = environ_value(*block, kTunables);
  const char* mine_c = std::getenv(kTunables);
  const std::optional<std::string> mine = mine_c ? std::optional<std::string>(mine_c) : std::nullopt;
  if (theirs == mine) return ok();
  auto show = [&](const std::optional<std::string>& v) {
    return v ? std::string("with ") + kTunables + "=" + *v : std::string("without");
  };
  return err("process ", pid, " started ", show(theirs), ", uprof ", show(mine));
}

}  // namespace uprof
