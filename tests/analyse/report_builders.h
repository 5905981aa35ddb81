// Report models built by hand, as build_report makes them from a recording: for the
// tests of what reads them (uprof diff's matching and its outputs).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "analyse/event_builders.h"
#include "uprof/analyse/report_model.h"

namespace uprof::test {

struct Fn {
  std::string name;
  std::vector<uint64_t> latencies{};  // one per call
  bool paired = true;                 // false: an entry probe only, `hits` calls
  uint64_t hits = 0;
  std::string path = "/build/app";
  std::string build_id = "aaaa";
  std::string comm{};                 // a thread name: the group of --by-thread
  uint32_t tid = 0;
};

// A report model as build_report makes it: one probe pair (or entry probe) per
// function name, one group per Fn (several Fn of one name: one group each, as threads).
inline ReportModel model(const std::vector<Fn>& fns) {
  ReportModel m;
  std::vector<std::string> seen;
  std::vector<ProbeInfo> probes;
  uint64_t vaddr = 0x1000;
  for (const Fn& f : fns) {
    const std::string key = f.name + "@" + f.path;
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    auto idx = static_cast<uint32_t>(probes.size());
    probes.push_back(test::probe(idx, ProbeKind::Entry, f.name, vaddr, {}, 0, f.path));
    if (f.paired) probes.push_back(test::probe(idx + 1, ProbeKind::Return, f.name, vaddr, {}, 0, f.path));
    for (auto& p : probes) if (p.path == f.path) p.build_id = f.build_id;
    vaddr += 0x100;
  }
  m.probes = probes;
  m.functions = group_probes(probes);
  m.selected.assign(m.functions.functions.size(), true);
  for (const Fn& f : fns) {
    GroupStats g;
    for (uint32_t i = 0; i < m.functions.functions.size(); ++i) {
      const auto& fi = m.functions.functions[i];
      if (fi.name == f.name && fi.path == f.path) g.function = i;
    }
    g.comm = f.comm;
    g.tid = f.tid;
    g.pid = f.tid;
    for (uint64_t ns : f.latencies) g.latency.record(ns);
    g.calls = f.paired ? f.latencies.size() : f.hits;
    m.groups.push_back(g);
  }
  return m;
}

// n calls around `median` ns, spread +-10% evenly: a tight, known distribution.
inline std::vector<uint64_t> calls(std::size_t n, double median) {
  std::vector<uint64_t> v;
  for (std::size_t i = 0; i < n; ++i)
    v.push_back(static_cast<uint64_t>(median * (0.9 + 0.2 * static_cast<double>(i) / static_cast<double>(n))));
  return v;
}

}  // namespace uprof::test
