// Recordings of the why_slow fixture (tests/fixtures/why_slow.c) built by hand, whose
// stacks are the frames an unwinder gives: the return addresses after the real call
// instructions of the fixture built by the test build (found in its code, so the
// symbolization the tests check is real: the fixture's own symbols and DWARF).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "analyse/event_builders.h"
#include "support/test_support.h"
#include "uprof/resolve/elf/offset.h"
#include "uprof/resolve/image.h"

namespace uprof::test {

// The file offset of the return address of the call from `caller` to `callee` (x86-64:
// an e8 rel32 call whose target is callee's first byte); 0 when there is none.
inline uint64_t return_address(const Image& img, const std::string& caller, const std::string& callee) {
  auto from = img.functions.find_exact(caller);
  auto to = img.functions.find_exact(callee);
  if (from.size() != 1 || to.size() != 1) return 0;
  const uint64_t start = from[0]->addr, target = to[0]->addr;
  auto off = vaddr_to_offset(img.elf.loads(), start);
  if (!off) return 0;
  auto bytes = img.elf.read_bytes(*off, from[0]->size);
  if (!bytes) return 0;
  for (std::size_t i = 0; i + 5 <= bytes->size(); ++i) {
    if ((*bytes)[i] != 0xe8) continue;
    int32_t rel = 0;
    for (int b = 0; b < 4; ++b) rel |= static_cast<int32_t>(static_cast<uint32_t>((*bytes)[i + 1 + b]) << (8 * b));
    if (start + i + 5 + static_cast<uint64_t>(static_cast<int64_t>(rel)) == target) return *off + i + 5;
  }
  return 0;
}

// The why_slow fixture and the frames of its two call chains:
//   work <- spinner <- main,  work <- sleeper <- main
struct WhySlow {
  std::string path;
  std::string build_id;
  StackFrame in_spinner, in_sleeper, main_to_spinner, main_to_sleeper;

  static WhySlow load() {
    WhySlow w;
    w.path = fixture("x86_64", "why_slow");
    auto img = Image::load(w.path, DebugSearch{});
    EXPECT_TRUE(img) << img.error().message;
    if (!img) return w;
    w.build_id = (*img)->elf.build_id();
    w.in_spinner = {1, return_address(**img, "spinner", "work")};
    w.in_sleeper = {1, return_address(**img, "sleeper", "work")};
    w.main_to_spinner = {1, return_address(**img, "main", "spinner")};
    w.main_to_sleeper = {1, return_address(**img, "main", "sleeper")};
    EXPECT_NE(w.in_spinner.offset, 0u);
    EXPECT_NE(w.in_sleeper.offset, 0u);
    EXPECT_NE(w.main_to_spinner.offset, 0u);
    EXPECT_NE(w.main_to_sleeper.offset, 0u);
    return w;
  }

  // The Object event that names the fixture as object 1.
  Event object_event(uint64_t time = 1) const {
    Event e = event(EventKind::Object, 0, 0, time);
    e.object = 1;
    e.path = path;
    e.build_id = build_id;
    return e;
  }
};

// One call of work (probes 0: entry, 1: return, both carrying stacks and off-CPU totals):
// `entry_off` and `return_off` the thread's off-CPU totals at each side.
inline void work_call(std::vector<Event>& out, uint32_t tid, uint64_t t0, uint64_t duration,
                      const std::vector<StackFrame>& stack, OffCpuTimes entry_off = {}, OffCpuTimes return_off = {}) {
  Event in = sample(0, tid, t0);
  in.stack = stack;
  in.offcpu = entry_off;
  Event out_ev = sample(1, tid, t0 + duration);
  out_ev.stack = stack;
  out_ev.offcpu = return_off;
  out.push_back(in);
  out.push_back(out_ev);
}

inline std::vector<ProbeInfo> work_probes(const std::string& path, bool offcpu = true) {
  std::vector<ProbeInfo> p{probe(0, ProbeKind::Entry, "work", 0x1000, {}, 0, path),
                           probe(1, ProbeKind::Return, "work", 0x1000, {}, 0, path)};
  for (auto& x : p) {
    x.stack = true;
    x.offcpu = offcpu;
    x.role = x.kind == ProbeKind::Entry ? RowRole::Entry : RowRole::Return;
    x.row = "work";
  }
  return p;
}

// 30 calls from spinner (1 ms, 10 us of it runnable), 20 from sleeper (2 ms, 1.9 ms
// asleep, 20 us runnable), one without a stack (0.5 ms), alternating as the fixture does.
inline std::string why_slow_recording(const WhySlow& w, const std::string& name, uint64_t sleeper_ns = 2'000'000) {
  std::vector<Event> ev{w.object_event()};
  OffCpuTimes total{};
  uint64_t t = 1000;
  auto call = [&](uint64_t d, const std::vector<StackFrame>& stack, OffCpuTimes add) {
    OffCpuTimes before = total;
    for (std::size_t k = 0; k < kOffCpuKinds; ++k) total[k] += add[k];
    work_call(ev, 7, t, d, stack, before, total);
    t += d + 1000;
  };
  for (int i = 0; i < 30; ++i) {
    OffCpuTimes spin{};
    spin[static_cast<std::size_t>(OffCpuKind::Runnable)] = 10'000;
    call(1'000'000, {w.in_spinner, w.main_to_spinner}, spin);
    if (i < 20) {
      OffCpuTimes sleep{};
      sleep[static_cast<std::size_t>(OffCpuKind::Sleep)] = sleeper_ns - 100'000;
      sleep[static_cast<std::size_t>(OffCpuKind::Runnable)] = 20'000;
      call(sleeper_ns, {w.in_sleeper, w.main_to_sleeper}, sleep);
    }
  }
  call(500'000, {}, {});
  return write_data_file(name, RecordingMeta{}, work_probes(w.path), ev);
}

}  // namespace uprof::test
