// Multi-uprobe links: how the plan's probes are grouped into links (pure), how the
// attach path is chosen, and, live, that a site the kernel refuses is found and
// skipped while the others attach.
#include "uprof/engine/bpf/uprobe_links.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "support/test_support.h"
#include "uprof/engine/bpf/bpf_attach.h"

namespace uprof {
namespace {

ProbeCapture probe(uint32_t index, std::string path, uint64_t offset, bool is_return, uint64_t ref_ctr = 0) {
  return ProbeCapture{.probe = index, .path = std::move(path), .file_offset = offset, .is_return = is_return,
                      .ref_ctr_offset = ref_ctr, .label = "f" + std::to_string(index)};
}

TEST(UprobeLinks, EntriesAndReturnsOfOneFunctionShareASessionSite) {
  // add (entry 0, return 1) and sub (entry 2, return 3) in /bin/a; usdt (4, semaphore)
  // in /bin/a; a return alone (5) and an entry alone (6) in /lib/b.
  CapturePlan plan{.probes = {probe(0, "/bin/a", 0x1000, false), probe(1, "/bin/a", 0x1000, true),
                              probe(2, "/bin/a", 0x2000, false), probe(3, "/bin/a", 0x2000, true),
                              probe(4, "/bin/a", 0x3000, false, 0x4010), probe(5, "/lib/b", 0x500, true),
                              probe(6, "/lib/b", 0x600, false)}};
  const std::vector<bool> texts(plan.probes.size(), false);
  auto links = plan_uprobe_links(plan, texts, /*sessions=*/true);
  ASSERT_EQ(links.size(), 4u);  // a: sessions, entries; b: sessions, entries
  auto find = [&](std::string_view path, LinkKind kind) -> const LinkPlan& {
    for (const auto& l : links)
      if (l.path == path && l.kind == kind) return l;
    ADD_FAILURE() << "no " << to_string(kind) << " link for " << path;
    return links.front();
  };
  const LinkPlan& a_sessions = find("/bin/a", LinkKind::Sessions);
  ASSERT_EQ(a_sessions.sites.size(), 2u);
  EXPECT_EQ(a_sessions.sites[0].offset, 0x1000u);
  EXPECT_EQ(a_sessions.sites[0].cookie, session_cookie(0, 1));
  EXPECT_EQ(a_sessions.sites[0].cookie, 0x0000000200000001u);
  EXPECT_EQ(a_sessions.sites[1].cookie, session_cookie(2, 3));
  EXPECT_EQ(a_sessions.sites[1].probes, (std::vector<uint32_t>{2, 3}));
  const LinkPlan& a_entries = find("/bin/a", LinkKind::Entries);
  ASSERT_EQ(a_entries.sites.size(), 1u);
  EXPECT_EQ(a_entries.sites[0].cookie, 4u);
  EXPECT_EQ(a_entries.sites[0].ref_ctr_offset, 0x4010u);
  const LinkPlan& b_sessions = find("/lib/b", LinkKind::Sessions);
  ASSERT_EQ(b_sessions.sites.size(), 1u);
  EXPECT_EQ(b_sessions.sites[0].cookie, session_cookie(-1, 5));  // no entry record
  EXPECT_EQ(b_sessions.sites[0].cookie >> 32, 6u);
  EXPECT_EQ(b_sessions.sites[0].cookie & 0xffffffffu, 0u);
  EXPECT_EQ(find("/lib/b", LinkKind::Entries).sites[0].cookie, 6u);
}

TEST(UprobeLinks, WithoutSessionsReturnsGetAReturnsLink) {
  CapturePlan plan{.probes = {probe(0, "/bin/a", 0x1000, false), probe(1, "/bin/a", 0x1000, true)}};
  auto links = plan_uprobe_links(plan, std::vector<bool>{false, false}, /*sessions=*/false);
  ASSERT_EQ(links.size(), 2u);
  for (const auto& l : links) {
    ASSERT_EQ(l.sites.size(), 1u);
    EXPECT_EQ(l.sites[0].cookie, l.kind == LinkKind::Returns ? 1u : 0u);
  }
}

TEST(UprobeLinks, ProbesThatReadStringsTakeTheirOwnLink) {
  CapturePlan plan{.probes = {probe(0, "/bin/a", 0x1000, false), probe(1, "/bin/a", 0x2000, false),
                              probe(2, "/bin/a", 0x2000, true)}};
  auto links = plan_uprobe_links(plan, std::vector<bool>{false, true, false}, true);
  ASSERT_EQ(links.size(), 2u);
  for (const auto& l : links) EXPECT_EQ(l.text, l.kind == LinkKind::Sessions) << to_string(l.kind);
}

// A probe that may fault a page in takes the sleepable program: its own link; a session
// is sleepable when either of its probes is.
TEST(UprobeLinks, ProbesThatMayFaultTakeTheirOwnLink) {
  // Entry 0 reads registers; 1 (with its return 2) and 3 read memory behind an address.
  CapturePlan plan{.probes = {probe(0, "/bin/a", 0x1000, false), probe(1, "/bin/a", 0x2000, false),
                              probe(2, "/bin/a", 0x2000, true), probe(3, "/bin/a", 0x3000, false)}};
  auto links = plan_uprobe_links(plan, std::vector<bool>(4, false), true, std::vector<bool>{false, true, false, true});
  ASSERT_EQ(links.size(), 3u);  // entries not sleepable (0), entries sleepable (3), the session sleepable (1, 2)
  for (const auto& l : links) {
    ASSERT_EQ(l.sites.size(), 1u);
    EXPECT_EQ(l.sleepable, l.sites[0].probes[0] != 0) << to_string(l.kind) << " " << l.sites[0].probes[0];
  }
  auto none = plan_uprobe_links(plan, std::vector<bool>(4, false), true);
  ASSERT_EQ(none.size(), 2u);  // entries (0, 3), the session
  for (const auto& l : none) EXPECT_FALSE(l.sleepable);
  // A session is sleepable when either of its probes is.
  auto by_return = plan_uprobe_links(plan, std::vector<bool>(4, false), true, std::vector<bool>{false, false, true, false});
  for (const auto& l : by_return) EXPECT_EQ(l.sleepable, l.kind == LinkKind::Sessions) << to_string(l.kind);
}

TEST(BpfAttachChoice, LinksWhereTheKernelHasThem) {
  CaptureTarget launched{.pid = 100, .system_wide = false, .start_on_exec = true};
  CaptureTarget attached{.pid = 100, .system_wide = false, .start_on_exec = false};
  const UprobeLinkSupport both{.multi = 48, .session = 57}, multi_only{.multi = 48, .session = 0};
  auto c = choose_bpf_attach(BpfAttach::Auto, launched, both, "6.18.44");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->links && c->sessions);
  EXPECT_EQ(c->pid_filter, 0);  // a launched workload's children are followed: no pid filter
  EXPECT_EQ(c->describe(), "multi-uprobe links, sessions");
  c = choose_bpf_attach(BpfAttach::Auto, attached, both, "6.18.44");
  EXPECT_EQ(c->pid_filter, 100);
  c = choose_bpf_attach(BpfAttach::Auto, attached, multi_only, "6.6.1");
  EXPECT_TRUE(c->links);
  EXPECT_FALSE(c->sessions);
  EXPECT_EQ(c->pid_filter, 0);  // before 6.10
  c = choose_bpf_attach(BpfAttach::Auto, launched, UprobeLinkSupport{}, "6.1.0");
  EXPECT_FALSE(c->links);
  EXPECT_EQ(c->describe(), "uprobe-PMU events");
  EXPECT_FALSE(choose_bpf_attach(BpfAttach::Links, launched, UprobeLinkSupport{}, "6.1.0").ok());
  EXPECT_FALSE(choose_bpf_attach(BpfAttach::Events, launched, both, "6.18").value().links);
}

TEST(BpfAttachChoice, RefusedSiteNoteNamesTheFunction) {
  CapturePlan plan{.probes = {probe(0, "/lib/libc.so.6", 0x9a0f0, false), probe(1, "/lib/libc.so.6", 0x9a0f0, true)}};
  plan.probes[0].label = plan.probes[1].label = "pthread_spin_lock";
  EXPECT_EQ(refused_site_note(plan, RefusedSite{.path = "/lib/libc.so.6", .offset = 0x9a0f0, .error = 524,
                                                .probes = {0, 1}}),
            "skipped pthread_spin_lock (/lib/libc.so.6 @ 0x9a0f0): the kernel does not probe this instruction "
            "(ENOTSUPP)");
}

// A file of x86-64 code mapped executable by this process, so that the kernel analyses
// each probed instruction when the link goes on (it does so only where some process maps
// the file): `push %rbp` at 0 and 32, `lock incl (%rax)` at 16, which x86's uprobe code
// refuses (a lock prefix: arch/x86/kernel/uprobes.c).
class CodeFile {
 public:
  explicit CodeFile(const std::string& path) : path_(path) {
    std::vector<unsigned char> code(4096, 0x90);
    code[0] = 0x55;
    code[16] = 0xf0, code[17] = 0xff, code[18] = 0x00;
    code[32] = 0x55;
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(code.data()), 4096);
    int fd = ::open(path.c_str(), O_RDONLY);
    map_ = ::mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    ::close(fd);
  }
  ~CodeFile() {
    if (map_ != MAP_FAILED) ::munmap(map_, 4096);
  }
  bool mapped() const { return map_ != MAP_FAILED; }

 private:
  std::string path_;
  void* map_ = MAP_FAILED;
};

// `r0 = 0; exit`: a program for a multi-uprobe link that does nothing.
UniqueFd nop_program(uint32_t attach_type) {
  const bpf_insn insns[] = {{.code = 0xb7, .dst_reg = 0, .src_reg = 0, .off = 0, .imm = 0},  // mov r0, 0
                            {.code = 0x95, .dst_reg = 0, .src_reg = 0, .off = 0, .imm = 0}};  // exit
  LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = static_cast<bpf_attach_type>(attach_type));
  return UniqueFd(bpf_prog_load(BPF_PROG_TYPE_KPROBE, "uprof_nop", "GPL", insns, 2, &opts));
}

TEST(UprobeLinksLive, ARefusedSiteIsFoundAndTheOthersAttach) {
  UPROF_REQUIRE_ROOT();
  const UprobeLinkSupport k = uprobe_link_support();
  if (!k.multi) GTEST_SKIP() << "this kernel has no multi-uprobe links (Linux 6.6+)";
  test::TempDir dir;
  CodeFile code(dir.file("code.bin"));
  ASSERT_TRUE(code.mapped());
  UniqueFd prog = nop_program(k.multi);
  ASSERT_TRUE(prog.valid()) << std::strerror(errno);
  LinkPlan plan{.path = dir.file("code.bin"), .kind = LinkKind::Entries, .text = false,
                .sites = {LinkSite{.offset = 0, .cookie = 0, .probes = {0}},
                          LinkSite{.offset = 16, .cookie = 1, .probes = {1}},
                          LinkSite{.offset = 32, .cookie = 2, .probes = {2}}}};
  auto attached = attach_uprobe_links(std::span(&plan, 1), LinkPrograms{.entries = prog.get(), .types = k}, 0);
  ASSERT_TRUE(attached.ok()) << attached.error().message;
  ASSERT_EQ(attached->refused.size(), 1u);
  EXPECT_EQ(attached->refused[0].offset, 16u);
  EXPECT_EQ(attached->refused[0].error, 524);  // ENOTSUPP
  EXPECT_EQ(attached->refused[0].probes, (std::vector<uint32_t>{1}));
  // The two good sites are attached: 0 in one link, 32 in another (split in halves).
  EXPECT_EQ(attached->links.size(), 2u);
  EXPECT_EQ(attached->attempts, 5u);  // [0,16,32] -> [0] ok, [16,32] -> [16] refused, [32] ok
}

}  // namespace
}  // namespace uprof
