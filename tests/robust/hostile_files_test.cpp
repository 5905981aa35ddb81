// The files uprof writes and reads, tried as a hostile user would (issue 31): a link
// planted where root's data file goes, a FIFO or a device given as a program or a data
// file, a truncated ELF, an IFUNC library that wants root. What the user checks: the
// link's target keeps its bytes, the data file is 0600 and the sudo user's, every
// refusal is one line naming the file's type within a generous watchdog, and no code of
// a file ran as root.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <regex>

#include "robust_support.h"

namespace uprof::robust {
namespace {

using test::fixture;
using test::uprof_binary;

// A shared directory as /tmp is (1777), with a root-owned file outside it and a link to
// that file planted by user nobody under the name `name`.
struct PlantedLink {
  test::TempDir shared, outside;
  std::string target = outside.file("precious");
  std::string link;
  explicit PlantedLink(const std::string& name) : link(shared.file(name)) {
    ::chmod(shared.path().c_str(), 01777);
    std::ofstream(target) << "root's own bytes\n";
    std::filesystem::create_symlink(target, link);
    EXPECT_EQ(::lchown(link.c_str(), 65534, 65534), 0) << std::strerror(errno);
  }
  std::vector<std::string> shared_names() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(shared.path())) names.push_back(e.path().filename());
    return names;
  }
};

std::string only_error_line(const Finished& r) {
  auto lines = error_lines(r.err);
  EXPECT_EQ(lines.size(), 1u) << r.err;
  return lines.empty() ? "" : lines.front();
}

// record, report -o and diff -o: the link is refused by name before anything runs, its
// target keeps its bytes, and nothing is left beside it.
TEST(HostileFiles, APlantedLinkLeavesItsTargetUntouched) {
  UPROF_REQUIRE_UPROBES();
  PlantedLink p("uprof.data");
  auto r = run_child({uprof_binary(), "record", "-o", p.link, "-e", "add", "--", fixture("x86_64", "workload"), "calls",
                      "10"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(only_error_line(r), "uprof: store: " + p.link + " is a symbolic link (to " + p.target +
                                    "): uprof neither writes through a link nor replaces it; remove it or name "
                                    "another file");
  EXPECT_TRUE(r.out.empty()) << "the workload ran: " << r.out;
  EXPECT_EQ(slurp_file(p.target), "root's own bytes\n");
  EXPECT_EQ(p.shared_names(), std::vector<std::string>{"uprof.data"});
  EXPECT_TRUE(std::filesystem::is_symlink(p.link));

  // A real data file to report on and compare.
  test::TempDir dir;
  const std::string data = dir.file("u.data");
  ASSERT_EQ(run_child({uprof_binary(), "record", "-o", data, "-e", "add", "--", fixture("x86_64", "workload"), "calls",
                       "10"}).exit_code, 0);
  PlantedLink q("report.html");
  for (std::vector<std::string> cmd : {std::vector<std::string>{"report", data, "--format", "html", "-o", q.link},
                                       {"diff", data, data, "-o", q.link}}) {
    auto c = run_child([&] {
      std::vector<std::string> argv{uprof_binary()};
      argv.insert(argv.end(), cmd.begin(), cmd.end());
      return argv;
    }());
    EXPECT_EQ(c.exit_code, 1) << cmd[0];
    EXPECT_EQ(only_error_line(c), "uprof: " + cmd[0] + ": " + q.link + " is a symbolic link (to " + q.target +
                                      "): uprof neither writes through a link nor replaces it; remove it or name "
                                      "another file");
    EXPECT_EQ(slurp_file(q.target), "root's own bytes\n") << cmd[0];
    EXPECT_EQ(q.shared_names(), std::vector<std::string>{"report.html"}) << cmd[0];
  }
}

// The data file and a report are 0600 (they hold other programs' arguments), belong to
// the user who ran sudo when there is one, and replace a file already there without
// touching another name of it (a hard link).
TEST(HostileFiles, TheDataFileIsPrivateAndTheSudoUsers) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string data = dir.file("u.data"), other_name = dir.file("other-name");
  std::ofstream(data) << "an old recording";
  ASSERT_EQ(::link(data.c_str(), other_name.c_str()), 0);
  auto r = run_child({uprof_binary(), "record", "-o", data, "-e", "add %di", "--", fixture("x86_64", "workload"),
                      "calls", "10"},
                     {.env = {"SUDO_UID=65534", "SUDO_GID=65534"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::stat(data.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_EQ(slurp_file(other_name), "an old recording");
  EXPECT_EQ(load_data(data).samples.size(), 20u);  // 10 entries, 10 returns

  // Without sudo: root's, still 0600; a report too.
  auto plain = run_child({uprof_binary(), "record", "-o", data, "-e", "add", "--", fixture("x86_64", "workload"),
                          "calls", "10"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(::stat(data.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, ::getuid());
  const std::string page = dir.file("r.html");
  auto rep = run_child({uprof_binary(), "report", data, "--format", "html", "-o", page}, {.env = {"SUDO_UID=65534"}});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  ASSERT_EQ(::stat(page.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, 65534u);
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"other-name", "r.html", "u.data"}));  // no temporary file left
}

// Another kind of file at the output's name is refused by its type, not written on.
TEST(HostileFiles, AnOutputThatIsNotARegularFileIsRefusedByItsType) {
  test::TempDir dir;
  const std::string fifo = dir.file("u.data");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto r = run_child({uprof_binary(), "record", "-o", fifo, "-e", "add", "--", fixture("x86_64", "workload"), "calls",
                      "10"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(only_error_line(r), "uprof: store: " + fifo + " is a FIFO (named pipe), not a regular file: uprof writes "
                                    "only regular files; name another file");
  EXPECT_TRUE(r.out.empty()) << "the workload ran: " << r.out;
  auto dev = run_child({uprof_binary(), "record", "-o", "/dev/full", "-e", "add", "--", fixture("x86_64", "workload"),
                        "calls", "10"});
  EXPECT_EQ(dev.exit_code, 1);
  EXPECT_EQ(only_error_line(dev), "uprof: store: /dev/full is a character device, not a regular file: uprof writes "
                                      "only regular files; name another file");
}

// A command that must end within the watchdog: nullopt (and the child killed) if not.
std::optional<Finished> within(const std::vector<std::string>& argv, std::chrono::seconds watchdog) {
  Child c(argv);
  auto status = c.wait_for(watchdog);
  if (!status) return std::nullopt;
  return Finished{.pid = c.pid(), .exit_code = *status, .out = c.out(), .err = c.err()};
}

// /dev/zero, a FIFO nobody writes, a directory and a 2 GB sparse file given as the
// program or the library: refused by their type at once. The bound is a watchdog (it
// was a hang, with memory growing), not a timing: anything under it passes.
TEST(HostileFiles, InputsThatAreNotRegularElfFilesAreRefusedByType) {
  test::TempDir dir;
  const std::string fifo = dir.file("fifo"), sparse = dir.file("sparse");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0755), 0);
  {
    std::ofstream(sparse) << "";
    std::filesystem::resize_file(sparse, 2ull << 30);
    std::filesystem::permissions(sparse, std::filesystem::perms::owner_all);
  }
  struct Case {
    std::string file, line;
  };
  for (const Case& c : {Case{"/dev/zero", "uprof: elf: /dev/zero is a character device, not an ELF file"},
                        Case{fifo, "uprof: elf: " + fifo + " is a FIFO (named pipe), not an ELF file"},
                        Case{dir.path(), "uprof: elf: " + dir.path() + ": is a directory"},
                        Case{sparse, "uprof: elf: " + sparse + ": not an ELF file"}}) {
    auto probe = within({uprof_binary(), "probe", c.file, "add"}, std::chrono::seconds(10));
    ASSERT_TRUE(probe) << "uprof probe " << c.file << " still ran after 10 s";
    EXPECT_EQ(probe->exit_code, 1) << c.file;
    EXPECT_EQ(only_error_line(*probe), c.line);
    // As a library named in a recording's spec: refused before the workload runs.
    auto lib = within({uprof_binary(), "record", "-o", dir.file("u.data"), "-e", c.file + ":add", "--",
                       fixture("x86_64", "workload"), "calls", "1"},
                      std::chrono::seconds(10));
    ASSERT_TRUE(lib) << "uprof record -e " << c.file << ":add still ran after 10 s";
    EXPECT_EQ(lib->exit_code, 1) << c.file;
    EXPECT_EQ(only_error_line(*lib), c.line);
    EXPECT_TRUE(lib->out.empty()) << "the workload ran: " << lib->out;
  }
  // /dev/zero and the FIFO as the program: refused by type, with a shell's 126.
  for (const auto& [file, type] : {std::pair<std::string, std::string>{"/dev/zero", "a character device"},
                                   {fifo, "a FIFO (named pipe)"}}) {
    auto run = within({uprof_binary(), "record", "-o", dir.file("u.data"), "-e", "add", "--", file},
                      std::chrono::seconds(10));
    ASSERT_TRUE(run) << "uprof record -- " << file << " still ran after 10 s";
    EXPECT_EQ(run->exit_code, 126) << file;
    EXPECT_EQ(only_error_line(*run), "uprof: workload: " + file + ": is " + type + ", not a program");
  }
  // The 2 GB file as the program (it is executable): its first page says it is no
  // script, and the ELF check refuses it; nothing reads it through.
  auto prog = within({uprof_binary(), "record", "-o", dir.file("u.data"), "-e", "add", "--", sparse},
                     std::chrono::seconds(10));
  ASSERT_TRUE(prog) << "uprof record -- " << sparse << " still ran after 10 s";
  EXPECT_EQ(prog->exit_code, 1);
  EXPECT_EQ(only_error_line(*prog), "uprof: elf: " + sparse + ": not an ELF file");
}

// A program cut short is called truncated, with the byte where it ends, not stripped.
TEST(HostileFiles, ATruncatedElfIsNamedTruncated) {
  test::TempDir dir;
  const std::string whole = fixture("x86_64", "workload"), cut = dir.file("workload-cut");
  const auto size = std::filesystem::file_size(whole);
  std::filesystem::copy_file(whole, cut);
  std::filesystem::resize_file(cut, size / 2);
  auto r = run_child({uprof_binary(), "probe", cut, "add"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(std::regex_match(only_error_line(r), std::regex("uprof: elf: " + cut + ": truncated at byte " +
                                                              std::to_string(size / 2) + ": its section headers .*")))
      << r.err;
  std::filesystem::resize_file(cut, 40);
  auto header = run_child({uprof_binary(), "probe", cut, "add"});
  EXPECT_EQ(only_error_line(header), "uprof: elf: " + cut + ": truncated at byte 40: an ELF header is 64 bytes");
}

// report and script given a pipe or a device say what it is; a FIFO nobody writes to
// does not hang them.
TEST(HostileFiles, ReportOfAPipeOrADeviceSaysWhatItIs) {
  test::TempDir dir;
  const std::string fifo = dir.file("u.data");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  for (const std::string cmd : {"report", "script"}) {
    auto pipe = within({uprof_binary(), cmd, fifo}, std::chrono::seconds(10));
    ASSERT_TRUE(pipe) << "uprof " << cmd << " of a FIFO still ran after 10 s";
    EXPECT_EQ(pipe->exit_code, 1);
    EXPECT_EQ(only_error_line(*pipe), "uprof: store: " + fifo + " is a FIFO (named pipe), not a regular file: uprof "
                                          "reads a data file by offset, which a pipe cannot give; save it to a file "
                                          "first");
    auto zero = within({uprof_binary(), cmd, "/dev/zero"}, std::chrono::seconds(10));
    ASSERT_TRUE(zero) << "uprof " << cmd << " /dev/zero still ran after 10 s";
    EXPECT_EQ(zero->exit_code, 1);
    EXPECT_EQ(only_error_line(*zero), "uprof: store: /dev/zero is a character device, not a regular file: not a uprof "
                                          "data file");
  }
}

// `uprof probe` on an IFUNC of a library whose constructor and resolver log their uid:
// as root with SUDO_UID they ran as that user, without it as nobody; never as 0.
TEST(HostileFiles, AnIfuncLibrarysCodeNeverRunsAsRoot) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root";
  test::TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  const std::string log = dir.file("whoami.log");
  for (const std::string sudo : {"", "65534"}) {
    std::ofstream(log, std::ios::trunc) << "";
    ::chmod(log.c_str(), 0666);
    Child::Options env{.env = {"UPROF_WHOAMI_LOG=" + log}};
    if (!sudo.empty()) env.env.push_back("SUDO_UID=" + sudo);
    auto r = run_child({uprof_binary(), "probe", fixture("x86_64", "libwhoami.so"), "whoami"}, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("whoami_impl"), std::string::npos) << r.out;
    const std::string text = slurp_file(log);
    EXPECT_TRUE(std::regex_match(text, std::regex("ctor ([1-9][0-9]*) \\1\nresolver \\1 \\1\n"))) << text;
    if (!sudo.empty()) {
      EXPECT_EQ(text, "ctor 65534 65534\nresolver 65534 65534\n");
    }
  }
}

}  // namespace
}  // namespace uprof::robust
