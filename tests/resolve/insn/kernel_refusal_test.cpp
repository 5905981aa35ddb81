// uprof's prediction of the kernel's refusals (insn_class.h, "rejected") against the
// kernel itself. The kernel checks a probed instruction when it writes the breakpoint
// into a process: these tests map the probed file into their own memory (private,
// executable, never run) and open the probe for every process, so the kernel checks
// it then, in perf_event_open, and answers ENOTSUPP (524) when it refuses.
//   - tests/fixtures/refused.c's ks_* sites: each kind of refusal, and instructions
//     close to them that the kernel takes;
//   - every function of this machine's libc.so.6 (a private copy, so that no other
//     process gets a breakpoint): those predicted refused are refused, one by one, and
//     all the others are taken, together, by one multi-uprobe BPF link (an event each
//     would take minutes: closing a uprobe event waits for a grace period, ~90 ms).
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "support/test_support.h"
#include "uprof/attach/uprobe_pmu.h"
#include "uprof/resolve/elf/elf_file.h"
#include "uprof/resolve/elf/offset.h"
#include "uprof/resolve/find/library_search.h"
#include "uprof/resolve/image.h"
#include "uprof/resolve/insn/insn_class.h"
#include "uprof/util/unique_fd.h"

namespace uprof {
namespace {

constexpr int kEnotsupp = 524;

// `path` mapped private and executable into this process, as the loader would map it:
// the kernel then has a process to write a breakpoint into.
class ExecMapping {
 public:
  explicit ExecMapping(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return;
    size_ = static_cast<std::size_t>(st.st_size);
    void* m = ::mmap(nullptr, size_, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd.get(), 0);
    if (m != MAP_FAILED) addr_ = m;
  }
  ~ExecMapping() {
    if (addr_) ::munmap(addr_, size_);
  }
  ExecMapping(const ExecMapping&) = delete;
  ExecMapping& operator=(const ExecMapping&) = delete;
  bool ok() const { return addr_ != nullptr; }

 private:
  void* addr_ = nullptr;
  std::size_t size_ = 0;
};

// What perf_event_open answers for a uprobe-PMU event at `offset` of `path`, opened for
// every process on CPU 0: 0 when it opened.
int pmu_errno(const UprobePmu& pmu, const std::string& path, uint64_t offset) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = pmu.type;
  attr.config1 = reinterpret_cast<uint64_t>(path.c_str());
  attr.config2 = offset;
  long fd = ::syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return errno;
  ::close(static_cast<int>(fd));
  return 0;
}

// BPF_LINK_CREATE for a multi-uprobe link (Linux 6.6+), laid out as the kernel's UAPI
// has it (this machine's <linux/bpf.h> is older): prog_fd, target_fd, attach_type and
// flags, then the uprobe_multi member at byte 16.
struct UprobeMultiAttr {
  uint32_t prog_fd;
  uint32_t target_fd;
  uint32_t attach_type;
  uint32_t flags;
  uint64_t path;
  uint64_t offsets;
  uint64_t ref_ctr_offsets;
  uint64_t cookies;
  uint32_t cnt;
  uint32_t multi_flags;
  uint32_t pid;
  uint32_t pad[5];
};
constexpr uint32_t kTraceUprobeMulti = 48;  // BPF_TRACE_UPROBE_MULTI

// A BPF program that does nothing, for a multi-uprobe link to carry.
Result<UniqueFd> load_empty_program() {
  const bpf_insn insns[] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .src_reg = 0, .off = 0, .imm = 0},  // r0 = 0
      {.code = BPF_JMP | BPF_EXIT, .dst_reg = 0, .src_reg = 0, .off = 0, .imm = 0},
  };
  static const char license[] = "GPL";
  bpf_attr attr{};
  attr.prog_type = BPF_PROG_TYPE_KPROBE;
  attr.expected_attach_type = kTraceUprobeMulti;
  attr.insns = reinterpret_cast<uint64_t>(insns);
  attr.insn_cnt = 2;
  attr.license = reinterpret_cast<uint64_t>(license);
  long fd = ::syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof attr);
  if (fd < 0) return err("bpf: BPF_PROG_LOAD: ", std::strerror(errno));
  return UniqueFd(static_cast<int>(fd));
}

// What BPF_LINK_CREATE answers for one link over all `offsets` of `path`: 0 when it
// attached (the link is closed at once).
int multi_link_errno(int prog, const std::string& path, const std::vector<uint64_t>& offsets) {
  UprobeMultiAttr attr{};
  attr.prog_fd = static_cast<uint32_t>(prog);
  attr.attach_type = kTraceUprobeMulti;
  attr.path = reinterpret_cast<uint64_t>(path.c_str());
  attr.offsets = reinterpret_cast<uint64_t>(offsets.data());
  attr.cnt = static_cast<uint32_t>(offsets.size());
  long fd = ::syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof attr);
  if (fd < 0) return errno;
  ::close(static_cast<int>(fd));
  return 0;
}

// The offsets among `offsets` that make a link fail, by halves.
std::vector<uint64_t> refused_among(int prog, const std::string& path, const std::vector<uint64_t>& offsets) {
  if (offsets.empty() || multi_link_errno(prog, path, offsets) == 0) return {};
  if (offsets.size() == 1) return offsets;
  std::vector<uint64_t> lo(offsets.begin(), offsets.begin() + static_cast<std::ptrdiff_t>(offsets.size() / 2));
  std::vector<uint64_t> hi(offsets.begin() + static_cast<std::ptrdiff_t>(offsets.size() / 2), offsets.end());
  auto out = refused_among(prog, path, lo);
  auto more = refused_among(prog, path, hi);
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

std::vector<uint8_t> bytes_at(const ElfFile& elf, uint64_t offset) {
  std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(16, elf.file_size() - offset));
  auto b = elf.read_bytes(offset, n);
  return b ? *b : std::vector<uint8_t>{};
}

TEST(KernelRefusal, FixtureSitesAreRefusedAsPredicted) {
  UPROF_REQUIRE_UPROBES();
  const std::string path = test::fixture("x86_64", "refused");
  auto elf = ElfFile::open(path);
  ASSERT_TRUE(elf.ok()) << elf.error().message;
  auto pmu = read_uprobe_pmu();
  ASSERT_TRUE(pmu.ok()) << pmu.error().message;
  ExecMapping mapping(path);
  ASSERT_TRUE(mapping.ok());

  std::map<std::string, uint64_t> sites;
  for (const auto& s : elf->symbols())
    if (s.name.rfind("ks_", 0) == 0 && s.value)
      if (auto off = vaddr_to_offset(elf->loads(), s.value)) sites[s.name] = *off;
  ASSERT_EQ(sites.size(), 26u);
  int refused = 0, uprof_refuses = 0;
  for (const auto& [name, offset] : sites) {
    SCOPED_TRACE(name);
    InsnInfo predicted = classify_insn(Arch::X86_64, bytes_at(*elf, offset), offset);
    const int expected = predicted.cls == InsnClass::Rejected ? predicted.kernel_errno : 0;
    EXPECT_EQ(pmu_errno(*pmu, path, offset), expected) << describe(predicted);
    refused += expected != 0;
    uprof_refuses += predicted.cls == InsnClass::Rejected && expected == 0;
  }
  // The fixture's kinds, as its comments sort them: a prediction that took everything,
  // or nothing, would fail here.
  EXPECT_EQ(refused, 14);
  EXPECT_EQ(uprof_refuses, 5);
}

TEST(KernelRefusal, EveryLibcFunctionAsPredicted) {
  UPROF_REQUIRE_UPROBES();
  auto system_libc = find_system_library("libc", Arch::X86_64);
  ASSERT_TRUE(system_libc.ok()) << system_libc.error().message;
  test::TempDir dir;
  const std::string path = dir.file("libc.so.6");
  std::filesystem::copy_file(*system_libc, path);
  auto img = Image::load(path, DebugSearch{});
  ASSERT_TRUE(img.ok()) << img.error().message;
  const ElfFile& elf = (*img)->elf;

  std::set<uint64_t> offsets;
  for (const auto& f : (*img)->functions.functions())
    if (f.size)
      if (auto off = vaddr_to_offset(elf.loads(), f.addr)) offsets.insert(*off);
  std::vector<uint64_t> taken;
  std::map<uint64_t, InsnInfo> refused;
  std::size_t uprof_refuses = 0;
  for (uint64_t off : offsets) {
    InsnInfo info = classify_insn(Arch::X86_64, bytes_at(elf, off), off);
    if (info.cls == InsnClass::Rejected && info.kernel_errno) refused[off] = info;
    else taken.push_back(off);
    uprof_refuses += info.cls == InsnClass::Rejected && !info.kernel_errno;
  }

  auto pmu = read_uprobe_pmu();
  ASSERT_TRUE(pmu.ok()) << pmu.error().message;
  auto prog = load_empty_program();
  ASSERT_TRUE(prog.ok()) << prog.error().message;
  ExecMapping mapping(path);
  ASSERT_TRUE(mapping.ok());
  for (const auto& [off, info] : refused)
    EXPECT_EQ(pmu_errno(*pmu, path, off), info.kernel_errno) << "0x" << std::hex << off << " " << describe(info);
  for (uint64_t off : refused_among(prog->get(), path, taken)) {
    InsnInfo info = classify_insn(Arch::X86_64, bytes_at(elf, off), off);
    ADD_FAILURE() << "the kernel refuses 0x" << std::hex << off << ", predicted " << describe(info);
  }
  // The figures, for the record of what this libc holds.
  std::cout << (*img)->path << ": " << offsets.size() << " functions, " << refused.size()
            << " refused by the kernel as predicted, " << uprof_refuses
            << " taken by the kernel and refused by uprof, " << taken.size() - uprof_refuses << " probed\n";
  EXPECT_FALSE(refused.empty());  // Debian 12's libc: pthread_spin_lock (lock), AVX2 string functions (VEX)
}

}  // namespace
}  // namespace uprof
