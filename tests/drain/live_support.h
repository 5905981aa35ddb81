// Live recording for the tests that put real uprobes on real programs: start the
// program stopped, open the events, let it exec, drain until it exits, and keep a
// compact copy of every sample (a whole Sample is 700 bytes; 200,000 of them
// would be 140 MB).
#pragma once

#include <gtest/gtest.h>
#include <elf.h>
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
#include "uprof/engine/perf/perf_records.h"
#include "uprof/util/clock.h"
#include "uprof/resolve/elf/elf_file.h"
#include "uprof/resolve/elf/offset.h"

namespace uprof::test {

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

// The value slots a live test reads back as a Hit: the host's first two argument
// registers, its return and instruction pointer registers (each when `reads` samples
// it), and the first stack word (when it copies the stack).
inline std::vector<ValueSpec> hit_slots(const ProbeReads& reads) {
  const CallRegs cr = host_call_regs();
  std::vector<ValueSpec> slots;
  for (unsigned reg : {cr.arg0, cr.arg1, cr.ret, cr.ip})
    if (reads.regs_mask & (1ull << reg))
      slots.push_back(ValueSpec{.name = "r" + std::to_string(reg), .source = ValueSource::Register,
                                .reg = static_cast<uint16_t>(reg)});
  if (reads.stack_bytes >= 8) slots.push_back(ValueSpec{.name = "$stack0", .source = ValueSource::Stack});
  return slots;
}

// An Event of a probe with hit_slots() -> a Hit.
inline Hit hit_of(const Event& e, const std::vector<ValueSpec>& slots) {
  const CallRegs cr = host_call_regs();
  Hit hit{.time = e.time, .pid = e.pid, .tid = e.tid};
  for (std::size_t i = 0; i < slots.size() && i < e.nvalues; i++) {
    if (e.missing & (1u << i)) continue;
    const ValueSpec& v = slots[i];
    uint64_t x = e.values[i];
    if (v.source == ValueSource::Stack) hit.stack0 = x;
    else if (v.reg == cr.arg0) hit.arg0 = x;
    else if (v.reg == cr.arg1) hit.arg1 = x;
    else if (v.reg == cr.ret) hit.ret = x;
    else if (v.reg == cr.ip) hit.ip = x;
  }
  return hit;
}

// Runs `argv` under the probes and drains until it exits (or 120 s pass). Records
// become Events through the engine's own converter (engine/perf/perf_records.h).
inline Result<LiveRun> record_live(const std::vector<std::string>& argv,
                                   const std::vector<ProbeCapture>& probes,
                                   EventSetOptions options = {}) {
  LiveRun run;
  // The converter's plan: one entry per probe index the test uses, each with the
  // slots a Hit is read from.
  CapturePlan plan{.arch = host_arch(), .probes = {}};
  for (const ProbeCapture& p : probes) {
    if (p.probe >= plan.probes.size()) plan.probes.resize(p.probe + 1);
    plan.probes[p.probe] = p;
    plan.probes[p.probe].values = hit_slots(p.reads);
  }
  UPROF_ASSIGN(Workload w, Workload::spawn(argv));
  UPROF_ASSIGN(EventSet set, EventSet::open(probes, w.pid(), options));
  run.rings = set.rings().size();
  run.events = set.event_count();
  PerfRecordConverter converter(plan);
  for (const auto& ident : set.identities())
    converter.add_id(ident.id, ident.probe ? std::optional<uint32_t>(ident.probe->probe) : std::nullopt, *ident.attr);
  auto on_record = [&](std::size_t, std::span<const std::byte> rec) -> Status {
    auto e = converter.convert(rec);
    if (!e) {
      ++run.unknown_ids;
      return ok();
    }
    if (!*e) {
      ++run.other_records;
    } else if ((*e)->kind == EventKind::Sample) {
      run.hits[(*e)->probe].push_back(hit_of(**e, plan.probes[(*e)->probe].values));
    } else if ((*e)->kind == EventKind::Lost) {
      run.lost += (*e)->lost;
    } else {
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
  UPROF_ASSIGN(std::vector<KernelCounts> counts, set.counts());
  for (const KernelCounts& c : counts) {
    run.kernel_counts[c.probe] = c.hits;
    if (c.lost) run.kernel_lost[c.probe] = *c.lost;
  }
  return run;
}

}  // namespace uprof::test
