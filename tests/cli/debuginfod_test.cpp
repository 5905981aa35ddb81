// `uprof probe --vars` on a stripped binary whose debug file only a debuginfod server
// has: a real `debuginfod -F` (Debian's debuginfod package) serving a directory that
// holds funcs_stripped.debug, and uprof asking it through $DEBUGINFOD_URLS with a
// fresh $DEBUGINFOD_CACHE_PATH. Then the same from the client's cache with the server
// gone, and what a dead server, a miss and a server that never answers look like.
//
// debuginfod 0.188 has no option to listen on one address: as root the test first
// moves itself into a network namespace of its own (only its loopback), so the server
// is reachable from nowhere else; otherwise it listens on a free port of every address
// for the few seconds the test runs.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "support/test_support.h"
#include "uprof/resolve/elf/elf_file.h"
#include "uprof/util/unique_fd.h"

namespace uprof {
namespace {

namespace fs = std::filesystem;
using test::fixture;
using test::run;
using test::uprof_binary;

std::string find_debuginfod() {
  std::string dirs = std::getenv("PATH") ? std::getenv("PATH") : "";
  dirs += ":/usr/bin:/usr/sbin:/usr/local/bin";
  std::stringstream ss(dirs);
  for (std::string d; std::getline(ss, d, ':');)
    if (!d.empty() && ::access((d + "/debuginfod").c_str(), X_OK) == 0) return d + "/debuginfod";
  return "";
}

#define REQUIRE_DEBUGINFOD(exe)                                                                               \
  const std::string exe = find_debuginfod();                                                                  \
  if (exe.empty()) GTEST_SKIP() << "no debuginfod binary in PATH (Debian package debuginfod; scripts/setup.sh " \
                                   "installs it)"

// As root: a network namespace of this test process's own, its loopback up.
void private_loopback() {
  if (::geteuid() != 0 || ::unshare(CLONE_NEWNET) != 0) return;
  UniqueFd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ifreq ifr{};
  std::snprintf(ifr.ifr_name, IFNAMSIZ, "lo");
  if (::ioctl(s.get(), SIOCGIFFLAGS, &ifr) == 0) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    ::ioctl(s.get(), SIOCSIFFLAGS, &ifr);
  }
}

// A TCP socket on 127.0.0.1 at a port the kernel picked; listening or not.
UniqueFd loopback_socket(bool listening, int* port) {
  UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0 || (listening && ::listen(s.get(), 8) != 0))
    return UniqueFd();
  *port = ntohs(a.sin_port);
  return s;
}

int free_port() {
  int port = 0;
  loopback_socket(false, &port);  // closed again: nothing listens there
  return port;
}

// The status code of GET http://127.0.0.1:PORT/PATH, or 0 when nothing answers.
int http_status(int port, const std::string& path) {
  UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{.tv_sec = 5, .tv_usec = 0};
  ::setsockopt(s.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return 0;
  std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (::write(s.get(), req.data(), req.size()) != static_cast<ssize_t>(req.size())) return 0;
  char buf[64] = {};
  ssize_t n = ::read(s.get(), buf, sizeof buf - 1);
  if (n < 12 || std::string(buf, 5) != "HTTP/") return 0;
  return std::atoi(buf + 9);  // "HTTP/1.0 200 OK"
}

// `debuginfod -F DIR` on a free port, stopped (SIGTERM, then SIGKILL) and reaped
// when it goes out of scope.
class DebuginfodServer {
 public:
  DebuginfodServer(const std::string& exe, const std::string& serve_dir, const std::string& work_dir) {
    for (int attempt = 0; attempt < 3 && pid_ < 0; ++attempt) {
      port_ = free_port();
      log_ = work_dir + "/debuginfod.log";
      pid_t pid = ::fork();
      if (pid < 0) return;
      if (pid == 0) {
        ::setpgid(0, 0);
        // A test that dies without its destructors (a crash, ctest's timeout) takes the server along.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        std::string port = std::to_string(port_), db = work_dir + "/debuginfod.sqlite";
        // -F: scan DIR's ELF/DWARF files; -t0 -g0: no rescans or grooming; -c1: one scanning thread.
        ::execl(exe.c_str(), exe.c_str(), "-F", "-p", port.c_str(), "-d", db.c_str(), "-t", "0", "-g", "0", "-c", "1",
                serve_dir.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
      }
      pid_ = pid;
      // A taken port ends it at once; a dead server is tried again on another port.
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) pid_ = -1;
    }
  }
  ~DebuginfodServer() { stop(); }
  DebuginfodServer(const DebuginfodServer&) = delete;
  DebuginfodServer& operator=(const DebuginfodServer&) = delete;

  bool running() const { return pid_ > 0; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string log() const {
    std::ifstream f(log_);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }

  // Until the server answers 200 for build-id `id`'s debuginfo: its scan has found the
  // file. False after `seconds`, or when it died.
  bool wait_until_serving(const std::string& id, double seconds = 30) {
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      if (http_status(port_, "/buildid/" + id + "/debuginfo") == 200) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  void stop() {
    if (pid_ <= 0) return;
    ::kill(-pid_, SIGTERM);
    for (int i = 0; i < 50; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string log_;
};

// uprof with debuginfod's environment set, and nothing of the caller's.
test::CommandResult uprof_with(const std::string& urls, const std::string& cache, std::vector<std::string> args,
                               std::vector<std::string> more_env = {}) {
  std::vector<std::string> argv{"env", "-u", "DEBUGINFOD_PROGRESS", "-u", "DEBUGINFOD_VERBOSE", "-u",
                                "DEBUGINFOD_TIMEOUT", "-u", "DEBUGINFOD_RETRY_LIMIT", "DEBUGINFOD_URLS=" + urls,
                                "DEBUGINFOD_CACHE_PATH=" + cache};
  argv.insert(argv.end(), more_env.begin(), more_env.end());
  argv.push_back(uprof_binary());
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// A stripped copy alone in DIR/bin, an empty debug directory (nothing found locally),
// an empty client cache, and DIR/served holding what the server serves.
struct Scene {
  test::TempDir dir;
  std::string bin, empty_debug_dir, cache, served, id;
  explicit Scene(const std::string& name = "funcs_stripped") {
    for (const char* d : {"/bin", "/debug", "/cache", "/served"}) fs::create_directories(dir.path() + d);
    bin = dir.path() + "/bin/" + name;
    empty_debug_dir = dir.path() + "/debug";
    cache = dir.path() + "/cache";
    served = dir.path() + "/served";
    fs::copy_file(fixture("x86_64", name), bin);
    auto elf = ElfFile::open(bin);
    if (elf) id = elf->build_id();
  }
};

TEST(Debuginfod, DownloadsTheDebugFileThenUsesTheCache) {
  REQUIRE_DEBUGINFOD(exe);
  private_loopback();
  Scene s;
  ASSERT_FALSE(s.id.empty());
  fs::copy_file(fixture("x86_64", "funcs_stripped.debug"), s.served + "/funcs_stripped.debug");
  auto server = std::make_unique<DebuginfodServer>(exe, s.served, s.dir.path());
  ASSERT_TRUE(server->running()) << server->log();
  ASSERT_TRUE(server->wait_until_serving(s.id)) << server->log();

  // What --vars says of the unstripped original, with the copy's path.
  const std::vector<std::string> specs{"add", "helper2_call"};
  std::vector<std::string> args{"probe", "--vars", "--debug-dir", s.empty_debug_dir, fixture("x86_64", "funcs_O2_pie")};
  args.insert(args.end(), specs.begin(), specs.end());
  auto want = run([&] {
    std::vector<std::string> a{uprof_binary()};
    a.insert(a.end(), args.begin(), args.end());
    return a;
  }());
  ASSERT_EQ(want.exit_code, 0) << want.err;
  ASSERT_NE(want.out.find("int a"), std::string::npos) << want.out;
  args[4] = s.bin;

  auto first = uprof_with(server->url(), s.cache, args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, replace_all(want.out, fixture("x86_64", "funcs_O2_pie"), s.bin));
  // stderr is not a terminal here: one line, the outcome.
  const std::string size = fs::exists(s.cache + "/" + s.id + "/debuginfo")
                               ? std::to_string(fs::file_size(s.cache + "/" + s.id + "/debuginfo"))
                               : "?";
  EXPECT_EQ(first.err.rfind("uprof: debuginfod: downloaded the debug file of " + s.bin + " (build-id " + s.id + ", ", 0),
            0u)
      << first.err;
  EXPECT_NE(first.err.find(") from " + server->url() + "\n"), std::string::npos) << first.err;
  EXPECT_EQ(std::count(first.err.begin(), first.err.end(), '\n'), 1) << first.err;
  ASSERT_TRUE(fs::exists(s.cache + "/" + s.id + "/debuginfo")) << size;
  EXPECT_EQ(fs::file_size(s.cache + "/" + s.id + "/debuginfo"), fs::file_size(fixture("x86_64", "funcs_stripped.debug")));

  // The server gone, the client's cache answers, silently.
  server->stop();
  EXPECT_EQ(http_status(std::stoi(server->url().substr(server->url().rfind(':') + 1)), "/metrics"), 0);
  auto second = uprof_with(server->url(), s.cache, args);
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, first.out);
  EXPECT_EQ(second.err, "");
}

TEST(Debuginfod, NothingListeningIsOneLineAndTheFileAlone) {
  Scene s;
  const std::string url = "http://127.0.0.1:" + std::to_string(free_port());
  const std::string line = "uprof: debuginfod: no debug file for " + s.bin + " (build-id " + s.id +
                           "): connection refused by " + url + "; going on without it\n";
  // A function of the stripped file's: not there without its debug file.
  auto r = uprof_with(url, s.cache, {"probe", "--vars", "--debug-dir", s.empty_debug_dir, s.bin, "add"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind(line, 0), 0u) << r.err;
  const std::string rest = r.err.substr(std::min(line.size(), r.err.size()));
  EXPECT_EQ(rest.rfind("uprof: elf: " + s.bin + ": no symbol 'add': the file is stripped and no debug file was found "
                       "(looked in ", 0),
            0u)
      << rest;
  EXPECT_NE(rest.find(", debuginfod " + url + " (connection refused by " + url + "))\n"), std::string::npos) << rest;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;

  // What the file has alone still works: an address.
  auto addr = uprof_with(url, s.cache, {"probe", "--debug-dir", s.empty_debug_dir, s.bin, "0x1040"});
  EXPECT_EQ(addr.exit_code, 0) << addr.err;
  EXPECT_EQ(addr.err, line);
  EXPECT_NE(addr.out.find("0x1040"), std::string::npos) << addr.out;
}

TEST(Debuginfod, ABuildIdTheServerLacksIsSaid) {
  REQUIRE_DEBUGINFOD(exe);
  private_loopback();
  // throw_split_stripped: no debug file anywhere, its functions in .dynsym (-rdynamic).
  Scene s("throw_split_stripped");
  // funcs_stripped's debug file, so that the server has something to serve.
  auto some = ElfFile::open(fixture("x86_64", "funcs_stripped"));
  ASSERT_TRUE(some);
  fs::copy_file(fixture("x86_64", "funcs_stripped.debug"), s.served + "/funcs_stripped.debug");
  DebuginfodServer server(exe, s.served, s.dir.path());
  ASSERT_TRUE(server.running()) << server.log();
  ASSERT_TRUE(server.wait_until_serving(some->build_id())) << server.log();

  auto r = uprof_with(server.url(), s.cache, {"probe", "--debug-dir", s.empty_debug_dir, s.bin, "inner"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "uprof: debuginfod: no debug file for " + s.bin + " (build-id " + s.id + "): not found on " +
                       server.url() + " (or a miss from there is remembered in the client cache for 10 minutes)"
                       "; going on without it\n");
  EXPECT_NE(r.out.find("inner"), std::string::npos) << r.out;
}

TEST(Debuginfod, ASilentServerTimesOutAfterDebuginfodTimeout) {
  Scene s;
  // Listening, never accepting: the connection is made and no byte ever comes.
  int port = 0;
  UniqueFd silent = loopback_socket(true, &port);
  ASSERT_TRUE(silent.valid());
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  auto t0 = std::chrono::steady_clock::now();
  auto r = uprof_with(url, s.cache, {"probe", "--debug-dir", s.empty_debug_dir, s.bin, "0x1040"},
                      {"DEBUGINFOD_TIMEOUT=1", "DEBUGINFOD_RETRY_LIMIT=0"});
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "uprof: debuginfod: no debug file for " + s.bin + " (build-id " + s.id + "): timed out: no data from " +
                       url + " within DEBUGINFOD_TIMEOUT=1 s; going on without it\n");
  EXPECT_LT(took, 10.0);
}

}  // namespace
}  // namespace uprof
