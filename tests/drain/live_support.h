// Live recording for the tests that put real uprobes on real programs: start the
// program stopped, open the events, let it exec, drain until it exits, and keep a
// compact copy of every sample (a whole Sample is 700 bytes; 200,000 of them
// would be 140 MB).
#pragma once

#include <gtest/gtest.h>
#include <elf.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/attach/event_set.h"
#include "uprof/attach/workload.h"
#include "uprof/drain/drain_loop.h"
#include "uprof/drain/record_decoder.h"
#include "uprof/resolve/elf_file.h"
#include "uprof/resolve/offset.h"

namespace uprof::test {

inline bool have_uprobe_pmu() {
  struct stat st {};
  return ::stat(kUprobePmuDir, &st) == 0;
}

#define UPROF_REQUIRE_UPROBE_PMU()                                                    \
  do {                                                                                \
    if (!::uprof::test::have_uprobe_pmu())                                            \
      GTEST_SKIP() << "no uprobe PMU: " << ::uprof::kUprobePmuDir << " is absent";    \
  } while (0)

inline uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

// File offset of function `name` in `path`, by the PT_LOAD formula.
inline Result<uint64_t> function_offset(const std::string& path, const std::string& name) {
  UPROF_ASSIGN(ElfFile elf, ElfFile::open(path));
  for (const ElfSymbol& s : elf.symbols()) {
    if (s.name != name || s.type != STT_FUNC || s.value == 0) continue;
    auto off = vaddr_to_offset(elf.loads(), s.value);
    if (!off) return err("test: ", path, ": ", name, " at 0x", std::hex, s.value, " is in no PT_LOAD");
    return *off;
  }
  return err("test: ", path, ": no function ", name);
}

// The host's calling convention as perf register numbers (x86-64: DI, SI, AX).
struct CallRegs {
  unsigned arg0, arg1, ret, ip;
  uint64_t args_mask() const { return (1ull << arg0) | (1ull << arg1); }
  uint64_t ret_mask() const { return 1ull << ret; }
};
inline CallRegs host_call_regs() {
  const ArchInfo& a = arch_info(host_arch());
  return CallRegs{a.int_arg_regs[0], a.int_arg_regs[1], a.return_reg, a.ip_reg};
}

struct Hit {
  uint64_t time = 0;
  uint32_t pid = 0, tid = 0;
  // The host's first two argument registers and return register, when sampled
  // (kNone otherwise).
  static constexpr uint64_t kNone = ~uint64_t{0};
  uint64_t arg0 = kNone, arg1 = kNone, ret = kNone, ip = kNone;
  uint64_t stack0 = kNone;  // the first 8 valid bytes of the user stack, when sampled
};

struct LiveRun {
  std::map<uint32_t, std::vector<Hit>> hits;      // by probe_index, in drain order
  std::map<uint32_t, uint64_t> kernel_counts;     // by probe_index
  std::map<uint32_t, uint64_t> kernel_lost;       // by probe_index (PERF_FORMAT_LOST)
  uint64_t lost = 0;                              // sum of PERF_RECORD_LOST
  uint64_t other_records = 0;
  uint64_t unknown_ids = 0;
  DrainLoopResult loop;
  int exit_status = -1;
  uint64_t started_ns = 0, ended_ns = 0;
  std::size_t rings = 0, events = 0;

  // The probe's hits sorted by time (the rings are per CPU).
  std::vector<Hit> by_time(uint32_t probe) const {
    auto it = hits.find(probe);
    std::vector<Hit> v = it == hits.end() ? std::vector<Hit>{} : it->second;
    std::stable_sort(v.begin(), v.end(), [](const Hit& a, const Hit& b) { return a.time < b.time; });
    return v;
  }
  std::size_t count(uint32_t probe) const {
    auto it = hits.find(probe);
    return it == hits.end() ? 0 : it->second.size();
  }
};

// Runs `argv` under the probes and drains until it exits (or 120 s pass).
inline Result<LiveRun> record_live(const std::vector<std::string>& argv,
                                   const std::vector<ProbeRequest>& probes,
                                   EventSetOptions options = {}) {
  LiveRun run;
  UPROF_ASSIGN(Workload w, Workload::spawn(argv));
  UPROF_ASSIGN(EventSet set, EventSet::open(probes, w.pid(), options));
  run.rings = set.rings().size();
  run.events = set.event_count();
  const ArchInfo& arch = arch_info(host_arch());
  const CallRegs cr = host_call_regs();
  auto on_record = [&](std::size_t, std::span<const std::byte> rec) -> Status {
    UPROF_ASSIGN(std::optional<uint64_t> id, record_identifier(rec));
    const perf_event_attr* attr = id ? set.find_attr(*id) : nullptr;
    const ProbeRequest* req = id ? set.find_request(*id) : nullptr;
    UPROF_ASSIGN(perf_event_header h, decode_header(rec));
    if (!attr || !req) {
      ++run.unknown_ids;
      return ok();
    }
    UPROF_ASSIGN(DecodedRecord d, decode_record(rec, sample_format(*attr, arch)));
    if (auto* s = std::get_if<Sample>(&d)) {
      Hit hit{.time = s->time, .pid = s->pid, .tid = s->tid};
      hit.arg0 = s->reg(cr.arg0).value_or(Hit::kNone);
      hit.arg1 = s->reg(cr.arg1).value_or(Hit::kNone);
      hit.ret = s->reg(cr.ret).value_or(Hit::kNone);
      hit.ip = s->reg(cr.ip).value_or(Hit::kNone);
      if (s->valid_stack().size() >= 8) std::memcpy(&hit.stack0, s->valid_stack().data(), 8);
      run.hits[req->probe_index].push_back(hit);
    } else if (auto* l = std::get_if<LostRecord>(&d)) {
      run.lost += l->lost;
    } else {
      (void)h;
      ++run.other_records;
    }
    return ok();
  };
  run.started_ns = monotonic_ns();
  if (options.start == StartMode::Explicit) UPROF_TRY(set.enable());
  UPROF_TRY(w.start());
  UPROF_ASSIGN(run.loop, run_drain_loop(set.rings(),
                                        StopCondition{.workload = w.pid(),
                                                      .deadline = std::chrono::steady_clock::now() +
                                                                  std::chrono::seconds(120)},
                                        on_record, [&] { return set.disable(); }));
  run.ended_ns = monotonic_ns();
  UPROF_ASSIGN(run.exit_status, w.wait());
  UPROF_ASSIGN(std::vector<ProbeHits> counts, set.counts());
  for (const ProbeHits& c : counts) {
    run.kernel_counts[c.probe_index] = c.hits;
    if (c.lost) run.kernel_lost[c.probe_index] = *c.lost;
  }
  return run;
}

}  // namespace uprof::test
