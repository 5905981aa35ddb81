// Hand-built probe tables and event streams for the analyse tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "uprof/analyse/pairing.h"
#include "uprof/model/recording.h"
#include "uprof/store/data_file.h"

namespace uprof::test {

inline ProbeInfo probe(uint32_t index, ProbeKind kind, std::string function, uint64_t vaddr,
                       std::vector<std::string> value_names = {}, uint64_t offset_in_function = 0,
                       std::string path = "./app") {
  // Assigned, not designated: recording.h's structs leave some members without
  // initializers, and -Wextra flags those a designated initializer skips.
  ProbeInfo p;
  p.index = index;
  p.kind = kind;
  p.spec = function;
  p.path = std::move(path);
  p.function = std::move(function);
  p.vaddr = vaddr;
  p.file_offset = vaddr;  // as in a PIE whose text segment starts at file offset == vaddr
  p.offset_in_function = offset_in_function;
  for (auto& n : value_names) {
    p.values.push_back(ValueSpec{.name = std::move(n),
                                 .source = kind == ProbeKind::Return ? ValueSource::ReturnValue : ValueSource::Register});
  }
  return p;
}

// A USDT probe "PROVIDER:NAME" (its entry kind, as probe_table makes it); `pair_key`
// marks the value slots that key its pair.
inline ProbeInfo usdt_probe(uint32_t index, std::string function, uint64_t vaddr,
                            std::vector<std::string> value_names = {}, uint32_t pair_key = 0,
                            std::string path = "./app") {
  ProbeInfo p = probe(index, ProbeKind::Entry, std::move(function), vaddr, std::move(value_names), 0, std::move(path));
  p.usdt = true;
  p.pair_key = pair_key;
  return p;
}

inline Event event(EventKind kind, uint32_t pid, uint32_t tid, uint64_t time) {
  Event e;
  e.kind = kind;
  e.pid = pid;
  e.tid = tid;
  e.time = time;
  return e;
}

inline Event sample(uint32_t probe, uint32_t tid, uint64_t time, std::initializer_list<uint64_t> values = {},
                    uint32_t pid = 0) {
  Event e = event(EventKind::Sample, pid == 0 ? tid : pid, tid, time);
  e.probe = probe;
  for (uint64_t v : values) e.values[e.nvalues++] = v;
  return e;
}

inline Event lost(uint64_t time, uint64_t count = 1, uint32_t probe = UINT32_MAX) {
  Event e = event(EventKind::Lost, 0, 0, time);
  e.probe = probe;
  e.lost = count;
  return e;
}

// A loss of one thread, as the BPF engine marks it on the thread's next record.
inline Event thread_lost(uint32_t tid, uint64_t time, uint64_t count = 1, uint32_t pid = 0) {
  Event e = event(EventKind::Lost, pid == 0 ? tid : pid, tid, time);
  e.probe = UINT32_MAX;
  e.lost = count;
  return e;
}

// A loss of any thread between `time` and `until`, as a perf ring's LOST record says.
inline Event gap_lost(uint64_t time, uint64_t until, uint64_t count = 1) {
  Event e = lost(time, count);
  e.lost_until = until;
  return e;
}

inline Event exit_event(uint32_t tid, uint64_t time, uint32_t pid = 0) {
  return event(EventKind::Exit, pid == 0 ? tid : pid, tid, time);
}

inline Event fork_event(uint32_t pid, uint32_t tid, uint32_t parent_pid, uint32_t parent_tid, uint64_t time) {
  Event e = event(EventKind::Fork, pid, tid, time);
  e.nvalues = 2;
  e.values[0] = parent_pid;
  e.values[1] = parent_tid;
  return e;
}

inline Event comm_event(uint32_t pid, uint32_t tid, std::string comm, uint64_t time = 0) {
  Event e = event(EventKind::Comm, pid, tid, time);
  e.comm = std::move(comm);
  return e;
}

// A finished recording of `events` (in time order) in a temporary file named after
// `name`; its trailer counts each probe's samples as recorded and seen by the kernel.
inline std::string write_data_file(const std::string& name, const RecordingMeta& meta,
                                   const std::vector<ProbeInfo>& probes, const std::vector<Event>& events) {
  std::string path =
      (std::filesystem::temp_directory_path() / ("uprof_test_" + std::to_string(getpid()) + "_" + name)).string();
  auto w = DataFileWriter::create(path, meta, probes);
  EXPECT_TRUE(w.ok()) << (w.ok() ? "" : w.error().message);
  if (!w.ok()) return path;
  Trailer tr;
  tr.counts.resize(probes.size());
  for (const Event& e : events) {
    EXPECT_TRUE(w->add(e).ok());
    if (e.kind == EventKind::Sample && e.probe < tr.counts.size()) {
      tr.counts[e.probe].kernel++;
      tr.counts[e.probe].recorded++;
    }
    if (e.kind == EventKind::Lost) tr.lost += e.lost;
    tr.end_monotonic_ns = e.time;
  }
  tr.events = events.size();
  EXPECT_TRUE(w->finish(tr).ok());
  return path;
}

// Keeps everything the pairer reports, with the values copied out of their spans.
struct CollectedCall {
  Call call;
  std::vector<uint64_t> entry_values;
  std::vector<uint64_t> return_values;
};
struct CollectedUnmatched {
  Unmatched unmatched;
  std::vector<uint64_t> values;
};

class CollectingSink : public PairingSink {
 public:
  void on_call(const Call& c) override {
    calls.push_back({c, {c.entry_values.begin(), c.entry_values.end()}, {c.return_values.begin(), c.return_values.end()}});
    calls.back().call.entry_values = {};
    calls.back().call.return_values = {};
  }
  void on_unmatched(const Unmatched& u) override {
    unmatched.push_back({u, {u.values.begin(), u.values.end()}});
    unmatched.back().unmatched.values = {};
  }
  void on_hit(const Hit& h) override {
    hits.push_back(h);
    hits.back().values = {};
  }

  std::size_t unmatched_count(UnmatchedReason r) const {
    std::size_t n = 0;
    for (const auto& u : unmatched) n += u.unmatched.reason == r;
    return n;
  }

  std::vector<CollectedCall> calls;
  std::vector<CollectedUnmatched> unmatched;
  std::vector<Hit> hits;
};

}  // namespace uprof::test
