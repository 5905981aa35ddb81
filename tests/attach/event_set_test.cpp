#include "uprof/attach/event_set.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "support/test_support.h"
#include "uprof/attach/perf_event.h"
#include "uprof/attach/workload.h"
#include "uprof/resolve/elf/elf_file.h"

namespace uprof {
namespace {

uint64_t add_offset(const std::string& exe) {
  auto elf = ElfFile::open(exe);
  if (!elf.ok()) return 0;
  for (const auto& s : elf->symbols())
    if (s.name == "add" && s.type == STT_FUNC)
      return vaddr_to_offset(elf->loads(), s.value).value_or(0);
  return 0;
}

std::vector<ProbeCapture> probes_for(const std::string& exe, uint64_t off) {
  return {ProbeCapture{.probe = 7, .path = exe, .file_offset = off, .is_return = false,
                       .reads = ProbeReads{.regs_mask = 0x30}},
          ProbeCapture{.probe = 9, .path = exe, .file_offset = off, .is_return = true,
                       .reads = ProbeReads{.regs_mask = 0x1}}};
}

class EventSetLive : public ::testing::TestWithParam<ProbeBackend> {
 protected:
  void SetUp() override {
    UPROF_REQUIRE_UPROBES();
    exe_ = test::fixture("x86_64", "mytest");
    off_ = add_offset(exe_);
    ASSERT_NE(off_, 0u);
  }
  std::string exe_;
  uint64_t off_ = 0;
};

TEST_P(EventSetLive, OneEventPerProbePerCpuOneRingPerCpu) {
  auto w = Workload::spawn({exe_, "10"});
  ASSERT_TRUE(w.ok()) << w.error().message;
  auto probes = probes_for(exe_, off_);
  auto set = EventSet::open(probes, w->pid(), EventSetOptions{.backend = GetParam()});
  ASSERT_TRUE(set.ok()) << set.error().message;
  std::size_t ncpu = set->cpus().size();
  EXPECT_EQ(ncpu, static_cast<std::size_t>(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_EQ(set->rings().size(), ncpu);
  EXPECT_EQ(set->event_count(), 2 * ncpu);
  for (std::size_t i = 0; i < ncpu; ++i) EXPECT_EQ(set->rings()[i].cpu(), set->cpus()[i]);
  // Nothing has run yet: the events wait for the exec.
  auto counts = set->counts();
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  ASSERT_EQ(counts->size(), 2u);
  EXPECT_EQ((*counts)[0].probe, 7u);
  EXPECT_EQ((*counts)[0].hits, 0u);
  EXPECT_EQ((*counts)[1].probe, 9u);
  EXPECT_EQ((*counts)[0].lost, std::optional<uint64_t>(0));
  EXPECT_EQ(set->find_probe(0xdeadbeef), nullptr);
  EXPECT_EQ(set->find_attr(0xdeadbeef), nullptr);
}

TEST_P(EventSetLive, CountsAfterTheRun) {
  auto w = Workload::spawn({exe_, "321"});
  ASSERT_TRUE(w.ok()) << w.error().message;
  auto set = EventSet::open(probes_for(exe_, off_), w->pid(), EventSetOptions{.backend = GetParam()});
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_TRUE(w->start().ok());
  ASSERT_EQ(*w->wait(), 0);
  auto counts = set->counts();
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  EXPECT_EQ((*counts)[0].hits, 321u);
  EXPECT_EQ((*counts)[1].hits, 321u);
}

TEST_P(EventSetLive, DisabledEventsCountNothing) {
  // Explicit start and no enable(): the program runs unprobed.
  auto w = Workload::spawn({exe_, "100"});
  ASSERT_TRUE(w.ok()) << w.error().message;
  auto set = EventSet::open(probes_for(exe_, off_), w->pid(),
                            EventSetOptions{.backend = GetParam(), .start = StartMode::Explicit});
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_TRUE(w->start().ok());
  ASSERT_EQ(*w->wait(), 0);
  EXPECT_EQ((*set->counts())[0].hits, 0u);
  EXPECT_TRUE(set->enable().ok());
  EXPECT_TRUE(set->disable().ok());
}

TEST_P(EventSetLive, BadOffsetNamesPathAndOffset) {
  auto w = Workload::spawn({exe_, "1"});
  ASSERT_TRUE(w.ok());
  struct stat st {};
  ASSERT_EQ(::stat(exe_.c_str(), &st), 0);
  uint64_t beyond = static_cast<uint64_t>(st.st_size) + 0x1000;
  std::vector<ProbeCapture> p{ProbeCapture{.probe = 0, .path = exe_, .file_offset = beyond}};
  auto set = EventSet::open(p, w->pid(), EventSetOptions{.backend = GetParam()});
  ASSERT_FALSE(set.ok());
  const std::string& m = set.error().message;
  EXPECT_NE(m.find(exe_), std::string::npos) << m;
  std::ostringstream hex;
  hex << std::hex << beyond;
  EXPECT_NE(m.find(hex.str()), std::string::npos) << m;
  std::cout << "[ measured ] " << m << "\n";
}

TEST_P(EventSetLive, MissingFileIsNamed) {
  auto w = Workload::spawn({exe_, "1"});
  ASSERT_TRUE(w.ok());
  std::vector<ProbeCapture> p{ProbeCapture{.path = "/nonexistent/prog", .file_offset = 0x40}};
  auto set = EventSet::open(p, w->pid(), EventSetOptions{.backend = GetParam()});
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.error().message.find("/nonexistent/prog"), std::string::npos) << set.error().message;
  std::cout << "[ measured ] " << set.error().message << "\n";
}

TEST_P(EventSetLive, IdsMapBackToRequests) {
  auto w = Workload::spawn({exe_, "1"});
  ASSERT_TRUE(w.ok());
  auto set = EventSet::open(probes_for(exe_, off_), w->pid(), EventSetOptions{.backend = GetParam()});
  ASSERT_TRUE(set.ok()) << set.error().message;
  // The ids are the kernel's; ask the first ring's fd (the first probe on cpu 0).
  auto id = event_id(set->rings()[0].fd());
  ASSERT_TRUE(id.ok()) << id.error().message;
  const ProbeCapture* r = set->find_probe(*id);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->probe, 7u);
  EXPECT_FALSE(r->is_return);
  const perf_event_attr* a = set->find_attr(*id);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->sample_regs_user, 0x30u);
  EXPECT_EQ(a->config1, 0u);  // no pointer into a string that may be gone
}

INSTANTIATE_TEST_SUITE_P(EventSetBackends, EventSetLive,
                         ::testing::Values(ProbeBackend::UprobePmu, ProbeBackend::Tracefs),
                         [](const auto& p) {
                           return p.param == ProbeBackend::UprobePmu ? "UprobePmu" : "Tracefs";
                         });

TEST(EventSetTracefsLive, NothingLeftInTracefs) {
  UPROF_REQUIRE_UPROBES();
  std::string exe = test::fixture("x86_64", "mytest");
  std::string group = tracefs_group_for_this_process();
  auto listed = [&] {
    std::ifstream in(*find_tracefs() + "/uprobe_events");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str().find(group + "/") != std::string::npos;
  };
  {
    auto w = Workload::spawn({exe, "1"});
    ASSERT_TRUE(w.ok());
    auto set = EventSet::open(probes_for(exe, add_offset(exe)), w->pid(),
                              EventSetOptions{.backend = ProbeBackend::Tracefs});
    ASSERT_TRUE(set.ok()) << set.error().message;
    EXPECT_TRUE(listed());
    EventSet moved = std::move(set.value());
    EXPECT_TRUE(listed());
  }
  EXPECT_FALSE(listed());
}

TEST(EventSetOpen, NoProbesIsAnError) {
  auto set = EventSet::open({}, 1);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().message, "attach: no probes to open");
}

TEST(EventSetOpen, MissingPmuDirectory) {
  std::vector<ProbeCapture> p{ProbeCapture{.path = "/bin/true", .file_offset = 0x40}};
  auto set = EventSet::open(p, 1, EventSetOptions{.pmu_dir = "/nonexistent/uprobe"});
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.error().message.find("CONFIG_UPROBES"), std::string::npos);
}

TEST(EventSetLimits, RaisesTheSoftFdLimit) {
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < 1024) GTEST_SKIP() << "hard limit too low";
  rlimit low = saved;
  low.rlim_cur = 128;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  EXPECT_TRUE(ensure_fd_headroom(10).ok());  // fits: left alone
  rlimit now{};
  getrlimit(RLIMIT_NOFILE, &now);
  EXPECT_EQ(now.rlim_cur, 128u);
  EXPECT_TRUE(ensure_fd_headroom(500).ok());  // does not fit: raised to the hard limit
  getrlimit(RLIMIT_NOFILE, &now);
  EXPECT_EQ(now.rlim_cur, saved.rlim_max);
  auto too_many = ensure_fd_headroom(static_cast<std::size_t>(saved.rlim_max) + 1);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.error().message.find("hard limit"), std::string::npos) << too_many.error().message;
  EXPECT_NE(too_many.error().message.find("ulimit -Hn"), std::string::npos);
  setrlimit(RLIMIT_NOFILE, &saved);
}

TEST(EventSetOpenError, Messages) {
  perf_event_attr a{};
  a.type = 8;
  UprobeTarget t{.path = "/work/build/mytest", .offset = 0x1130};
  std::string m = open_error_message(EACCES, a, 42, 0, &t);
  EXPECT_NE(m.find("perf_event_open(/work/build/mytest:0x1130, pid 42, cpu 0)"), std::string::npos) << m;
  EXPECT_NE(m.find("needs CAP_SYS_ADMIN (run as root)"), std::string::npos) << m;
  EXPECT_NE(m.find("Permission denied"), std::string::npos) << m;
  EXPECT_NE(open_error_message(EPERM, a, 42, 0, &t).find("CAP_SYS_ADMIN"), std::string::npos);
  m = open_error_message(EMFILE, a, 42, 0, &t);
  EXPECT_NE(m.find("RLIMIT_NOFILE"), std::string::npos) << m;
  EXPECT_NE(m.find("ulimit -Hn"), std::string::npos) << m;
  m = open_error_message(EINVAL, a, 42, 0, &t);
  EXPECT_NE(m.find("offset 0x1130 in '/work/build/mytest'"), std::string::npos) << m;
  EXPECT_NE(m.find("Invalid argument"), std::string::npos) << m;
  m = open_error_message(ENOENT, a, 42, 0, &t);
  EXPECT_NE(m.find("no such file '/work/build/mytest'"), std::string::npos) << m;
  m = open_error_message(ESRCH, a, 42, 1, nullptr);
  EXPECT_NE(m.find("type 8"), std::string::npos) << m;
  EXPECT_NE(m.find("no process 42"), std::string::npos) << m;
  m = open_error_message(EBUSY, a, 42, 1, nullptr);
  EXPECT_NE(m.find(": Device or resource busy"), std::string::npos) << m;
}

TEST(EventSetOpenError, FormatLostProbe) {
  // 6.0+ knows PERF_FORMAT_LOST; this machine runs 6.18.
  EXPECT_TRUE(kernel_supports_format_lost());
}

}  // namespace
}  // namespace uprof
