// The BPF engine's own guarantees, on the real kernel: chosen by default where the
// kernel runs it, the perf engine with the reason where it does not, and nothing of
// it left in the kernel after uprof ends, however it ends (checked with bpftool, as
// a user would). The robust stage runs alone, so every uprof_* program in the kernel
// while a test runs is its uprof's.
#include <regex>

#include "robust_support.h"

namespace uprof::robust {
namespace {

using test::fixture;
using test::uprof_binary;

// BPF programs and links in the kernel that a uprof loaded (program names uprof_*).
struct BpfObjects {
  int programs = 0;
  int links = 0;
};

BpfObjects uprof_bpf_objects() {
  BpfObjects o;
  auto progs = test::run({"bpftool", "prog", "list"});
  EXPECT_EQ(progs.exit_code, 0) << "bpftool prog list: " << progs.err << " (scripts/setup.sh installs bpftool)";
  std::set<std::string> ids;
  std::istringstream in(progs.out);
  std::regex re(R"(^(\d+): \S+\s+name (uprof_\w+))");
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, re)) {
      o.programs++;
      ids.insert(m[1]);
    }
  }
  auto links = test::run({"bpftool", "link", "list"});
  EXPECT_EQ(links.exit_code, 0) << "bpftool link list: " << links.err;
  std::istringstream lin(links.out);
  std::regex lre(R"(prog (\d+))");
  for (std::string l; std::getline(lin, l);) {
    std::smatch m;
    if (std::regex_search(l, m, lre) && ids.count(m[1])) o.links++;
  }
  return o;
}

// Waits up to 3 s for the kernel to let go of what a gone uprof held.
BpfObjects settled_objects() {
  BpfObjects o = uprof_bpf_objects();
  for (int i = 0; i < 30 && (o.programs || o.links); i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    o = uprof_bpf_objects();
  }
  return o;
}

TEST(BpfEngine, DefaultWhereTheKernelRunsIt) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  auto r = run_child({uprof_binary(), "record", "--no-calibrate", "-o", dir.file("u.data"), "-e", "add %di", "--",
                      fixture("x86_64", "workload"), "calls", "500"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("perf engine"), std::string::npos) << r.err;
  auto rep = test::run({uprof_binary(), "report", "-i", dir.file("u.data")});
  EXPECT_NE(rep.out.find(", bpf engine: multi-uprobe links, sessions)"), std::string::npos) << rep.out;
  EXPECT_NE(rep.out.find("add         500"), std::string::npos) << rep.out;
}

TEST(BpfEngine, KernelWithoutBpfRecordsWithThePerfEngineAndSaysWhy) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  for (const char* missing : {"no-bpf", "no-ringbuf", "no-cookie"}) {
    Child::Options env{.in_child = {}, .env = {std::string("UPROF_BPF_PRETEND=") + missing}};
    auto r = run_child({uprof_binary(), "record", "--no-calibrate", "-o", dir.file("u.data"), "-e", "add %di", "--",
                        fixture("x86_64", "workload"), "calls", "300"},
                       env);
    ASSERT_EQ(r.exit_code, 0) << missing << ": " << r.err;
    EXPECT_NE(r.err.find("uprof: recording with the perf engine: the kernel "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("pretended absent by UPROF_BPF_PRETEND"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("600 events recorded, 0 lost (kernel counted 600)"), std::string::npos) << r.err;
    auto rep = test::run({uprof_binary(), "report", "-i", dir.file("u.data")});
    EXPECT_NE(rep.out.find(", perf engine: tracefs uprobe events)"), std::string::npos) << rep.out;

    // Asked for by name, it is an error: one line, non-zero, no file.
    auto b = run_child({uprof_binary(), "record", "--engine", "bpf", "--no-calibrate", "-o", dir.file("b.data"),
                        "-e", "add", "--", fixture("x86_64", "workload"), "calls", "3"},
                       env);
    EXPECT_NE(b.exit_code, 0);
    EXPECT_NE(b.err.find("uprof: --engine bpf: the kernel "), std::string::npos) << b.err;
    EXPECT_EQ(error_lines(b.err).size(), 1u) << b.err;
  }
}

TEST(BpfEngine, NothingStaysInTheKernelAfterExitErrorCtrlCOrSigkill) {
  UPROF_REQUIRE_UPROBES();
  ASSERT_EQ(settled_objects().programs, 0) << "uprof programs in the kernel before the test";
  test::TempDir dir;
  const std::string bin = fixture("x86_64", "workload");
  // A normal exit.
  auto r = run_child({uprof_binary(), "record", "--engine", "bpf", "--no-calibrate", "-o", dir.file("a.data"), "-e",
                      "add", "--", bin, "calls", "100"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(settled_objects().programs, 0) << "after a normal exit";
  // An error after the programs were loaded: the workload cannot be run.
  auto bad = run_child({uprof_binary(), "record", "--engine", "bpf", "--no-calibrate", "-o", dir.file("b.data"), "-e",
                        bin + ":add", "--", "/nonexistent/prog"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_EQ(settled_objects().programs, 0) << "after an error";
  // Ctrl-C, and SIGKILL, while the probes are attached.
  for (int sig : {SIGINT, SIGKILL}) {
    Child rec({uprof_binary(), "record", "--engine", "bpf", "--no-calibrate", "-o", dir.file("c.data"), "-e",
               "slow_add %di", "--", bin, "sleep", "50", "100"});
    BpfObjects live;
    for (int i = 0; i < 100 && live.links < 5; i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      live = uprof_bpf_objects();
    }
    // The session program, fork, exit, exec and rename; one session link for
    // slow_add's entry and return, one link per tracepoint.
    EXPECT_EQ(live.programs, 5) << "while recording";
    EXPECT_GE(live.links, 5) << "while recording";
    ::kill(rec.pid(), sig);
    rec.wait();
    BpfObjects after = settled_objects();
    EXPECT_EQ(after.programs, 0) << "after signal " << sig;
    EXPECT_EQ(after.links, 0) << "after signal " << sig;
  }
}

}  // namespace
}  // namespace uprof::robust
