// Which implementation an IFUNC selects, checked against answers known beforehand:
// the fixture's `pick` selects pick_b on every machine (nm gives its address), and libc's
// strlen is whatever this very test process's loader bound (its own dlsym says).
#include "uprof/resolve/ifunc_choice.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include "support/test_support.h"
#include "uprof/resolve/resolver.h"
#include "uprof/util/sudo_user.h"

namespace uprof {
namespace {

using test::fixture;

// nm's address of `sym` in `path` (-D: the dynamic symbols), or 0.
uint64_t nm_address(const std::string& path, const std::string& sym, bool dynamic = false) {
  auto r = test::run_shell("nm " + std::string(dynamic ? "-D " : "") + path);
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string addr, type, name;
    // nm -D names versions: "strlen@@GLIBC_2.2.5".
    if (ls >> addr >> type >> name && name.substr(0, name.find('@')) == sym) return std::stoull(addr, nullptr, 16);
  }
  return 0;
}

// The file of this process's libc, and where its loader bound strlen, as a link-time
// address of that file: the oracle for both ways of knowing.
struct OwnStrlen {
  std::string libc;
  uint64_t vaddr = 0;
};
OwnStrlen own_strlen() {
  void* impl = dlsym(RTLD_DEFAULT, "strlen");
  Dl_info info{};
  link_map* map = nullptr;
  if (!impl || !dladdr1(impl, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) || !map) return {};
  return {.libc = map->l_name, .vaddr = reinterpret_cast<uint64_t>(impl) - map->l_addr};
}

ElfFile open_elf(const std::string& path) {
  auto e = ElfFile::open(path);
  EXPECT_TRUE(e) << e.error().message;
  return std::move(e).value();
}

TEST(AskLoader, FixtureIfuncSelectsPickB) {
  const std::string lib = fixture("x86_64", "libpick.so");
  const uint64_t pick_b = nm_address(lib, "pick_b");
  ASSERT_NE(pick_b, 0u);
  auto got = ask_loader(open_elf(lib), {{.name = "pick", .version = "", .resolver = nm_address(lib, "pick")}});
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ(got->front(), pick_b);
}

TEST(AskLoader, LibcStrlenIsWhatThisProcessBound) {
  const OwnStrlen own = own_strlen();
  ASSERT_FALSE(own.libc.empty());
  auto got = ask_loader(open_elf(own.libc), {{.name = "strlen", .version = "", .resolver = 0}});
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->front(), own.vaddr);
}

TEST(AskLoader, RefusesWhatItCannotAsk) {
  auto exe = ask_loader(open_elf(fixture("x86_64", "pick_exe")), {{.name = "pick", .version = "", .resolver = 0}});
  ASSERT_FALSE(exe);
  EXPECT_NE(exe.error().message.find("the loader cannot load it here to ask which implementation 'pick' selects"),
            std::string::npos)
      << exe.error().message;
  EXPECT_NE(exe.error().message.find("cannot dynamically load"), std::string::npos) << exe.error().message;

  const std::string arm = fixture("arm64", "libpick.so");
  auto other = ask_loader(open_elf(arm), {{.name = "pick", .version = "", .resolver = 0}});
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().message, "ifunc: " + arm + ": an arm64 file: which implementation its loader selects "
                                   "cannot be asked on this x86_64 machine");

  const std::string lib = fixture("x86_64", "libpick.so");
  auto none = ask_loader(open_elf(lib), {{.name = "no_such_pick", .version = "", .resolver = 0}});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("ifunc: " + lib + ": the loader finds no 'no_such_pick' in it"),
            std::string::npos)
      << none.error().message;
}

// The environment for one test, restored after it.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (auto [name, value] : vars) {
      const char* old = std::getenv(name);
      saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
      if (value) ::setenv(name, value, 1);
      else ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    for (auto& [name, old] : saved_) {
      if (old) ::setenv(name.c_str(), old->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// A log that the fixture libwhoami.so's code, run as any user, can append to: a
// directory everyone may enter, a file everyone may write.
struct WhoamiLog {
  test::TempDir dir;
  std::string path = dir.file("whoami.log");
  WhoamiLog() {
    ::chmod(dir.path().c_str(), 0755);
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd >= 0) ::fchmod(fd, 0666), ::close(fd);
  }
  std::string text() const {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

// Who ran the library's constructor and its IFUNC resolver: as root, the user who ran
// sudo, else nobody; never uid 0. The answer is the implementation nm names.
TEST(AskLoader, RunsTheFilesCodeAsNobodyOrTheSudoUserNeverAsRoot) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root: the drop to another user is what is tested";
  const std::string lib = fixture("x86_64", "libwhoami.so");
  const uint64_t impl = nm_address(lib, "whoami_impl");
  ASSERT_NE(impl, 0u);
  const IfuncQuery q{.name = "whoami", .version = "", .resolver = nm_address(lib, "whoami")};
  {
    WhoamiLog log;
    ScopedEnv env{{"UPROF_WHOAMI_LOG", log.path.c_str()}, {"SUDO_UID", nullptr}, {"SUDO_GID", nullptr}};
    const UserIds nobody = unprivileged_user();
    ASSERT_NE(nobody.uid, 0u);
    auto got = ask_loader(open_elf(lib), {q});
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(got->front(), impl);
    const std::string id = std::to_string(nobody.uid);
    EXPECT_EQ(log.text(), "ctor " + id + " " + id + "\nresolver " + id + " " + id + "\n");
  }
  {
    WhoamiLog log;
    ScopedEnv env{{"UPROF_WHOAMI_LOG", log.path.c_str()}, {"SUDO_UID", "4242"}, {"SUDO_GID", "4343"}};
    auto got = ask_loader(open_elf(lib), {q});
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(got->front(), impl);
    EXPECT_EQ(log.text(), "ctor 4242 4242\nresolver 4242 4242\n");
  }
}

// A file the unprivileged user cannot read is refused, and none of it runs.
TEST(AskLoader, AFileNobodyCanReadIsRefusedWithTheWayOut) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root";
  test::TempDir hidden;  // 0700, root's
  const std::string lib = hidden.file("libwhoami.so");
  std::filesystem::copy_file(fixture("x86_64", "libwhoami.so"), lib);
  WhoamiLog log;
  ScopedEnv env{{"UPROF_WHOAMI_LOG", log.path.c_str()}, {"SUDO_UID", nullptr}, {"SUDO_GID", nullptr}};
  auto got = ask_loader(open_elf(lib), {{.name = "whoami", .version = "", .resolver = 0}});
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().message,
            "ifunc: " + lib + ": uid " + std::to_string(unprivileged_user().uid) +
                " (nobody), as whom uprof asks the loader which implementation 'whoami' selects (it runs no file's code "
                "as root), cannot read it (Permission denied): make it readable to that user, or record with -p on a "
                "running process that loaded it (its own slots are read)");
  EXPECT_EQ(log.text(), "");
}

TEST(ProcessChoices, ThisProcessStrlenFromItsOwnSlots) {
  const OwnStrlen own = own_strlen();
  ASSERT_FALSE(own.libc.empty());
  const uint64_t resolver = nm_address(own.libc, "strlen", true);
  ASSERT_NE(resolver, 0u);
  auto got = process_choices(::getpid(), open_elf(own.libc), {{.name = "strlen", .version = "", .resolver = resolver}});
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->front().has_value());
  EXPECT_EQ(*got->front(), own.vaddr);
}

// A program whose IFUNC dlopen cannot ask about: running, its own IRELATIVE slot says.
class HeldPickExe {
 public:
  HeldPickExe() {
    int in[2], out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::close(in[1]);
      ::close(out[0]);
      const std::string exe = fixture("x86_64", "pick_exe");
      ::execl(exe.c_str(), exe.c_str(), "hold", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    stdin_ = in[1];
    char buf[6] = {};
    ready_ = ::read(out[0], buf, sizeof buf) == 6;
    ::close(out[0]);
  }
  ~HeldPickExe() {
    if (stdin_ >= 0) ::close(stdin_);
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
  }
  HeldPickExe(const HeldPickExe&) = delete;
  HeldPickExe& operator=(const HeldPickExe&) = delete;
  bool ready() const { return ready_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  bool ready_ = false;
};

TEST(ProcessChoices, RunningProgramSaysWhatItsLoaderBound) {
  const std::string exe = fixture("x86_64", "pick_exe");
  HeldPickExe proc;
  ASSERT_TRUE(proc.ready());
  auto got = process_choices(proc.pid(), open_elf(exe), {{.name = "pick", .version = "", .resolver = nm_address(exe, "pick")}});
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->front().has_value());
  EXPECT_EQ(*got->front(), nm_address(exe, "pick_b"));

  auto unmapped = process_choices(proc.pid(), open_elf(fixture("x86_64", "libpick.so")), {{.name = "pick", .version = "", .resolver = 0}});
  ASSERT_FALSE(unmapped);
  EXPECT_EQ(unmapped.error().message,
            "ifunc: process " + std::to_string(proc.pid()) + " does not map " + fixture("x86_64", "libpick.so"));
}

// The resolver: an IFUNC is probed at its implementation, and says so; where that
// cannot be known, the old refusal, now with the reason.
std::vector<ResolvedProbe> resolve(Resolver& r, const std::string& spec, const std::string& target) {
  auto s = parse_probe_spec(spec);
  EXPECT_TRUE(s) << s.error().message;
  auto p = r.resolve(*s, target);
  EXPECT_TRUE(p) << p.error().message;
  return p ? std::move(p).value() : std::vector<ResolvedProbe>{};
}

TEST(ResolverIfunc, ProbesTheSelectedImplementation) {
  const std::string lib = fixture("x86_64", "libpick.so");
  Resolver r;
  auto probes = resolve(r, "pick", lib);
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_EQ(probes[0].function, "pick");
  EXPECT_EQ(probes[0].symbol, "pick_b");
  EXPECT_EQ(probes[0].function_addr, nm_address(lib, "pick_b"));
  EXPECT_EQ(probes[0].as<FunctionPoint>()->ifunc_choice, "IFUNC, selected for this CPU");
  EXPECT_EQ(probes[0].describe(), "pick -> pick_b (IFUNC, selected for this CPU)");
  EXPECT_EQ(resolution_notes(probes), std::vector<std::string>{"pick -> pick_b (IFUNC, selected for this CPU)"});
  // A glob that matches the resolver and both implementations probes each once.
  auto globbed = resolve(r, "pick*", lib);
  std::vector<std::string> symbols;
  for (const auto& p : globbed) symbols.push_back(p.symbol);
  std::sort(symbols.begin(), symbols.end());
  EXPECT_EQ(symbols, (std::vector<std::string>{"pick_a", "pick_b"}));
}

TEST(ResolverIfunc, ProgramRefusedUnlessItRuns) {
  const std::string exe = fixture("x86_64", "pick_exe");
  Resolver here;
  auto refused = here.resolve(*parse_probe_spec("pick"), exe);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message.find("elf: " + exe + ": 'pick' is an IFUNC"), 0u) << refused.error().message;
  EXPECT_NE(refused.error().message.find("probe an implementation instead (pick_b, pick_a)"), std::string::npos)
      << refused.error().message;

  HeldPickExe proc;
  ASSERT_TRUE(proc.ready());
  ResolveOptions opts;
  opts.pid = proc.pid();
  Resolver there(opts);
  auto probes = resolve(there, "pick", exe);
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_EQ(probes[0].symbol, "pick_b");
  EXPECT_EQ(probes[0].as<FunctionPoint>()->ifunc_choice, "IFUNC, as process " + std::to_string(proc.pid()) + " bound it");
}

}  // namespace
}  // namespace uprof
