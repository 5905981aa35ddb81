// Host-side check of a data file that `uprof record` wrote in the arm64 guest
// (scripts/arm64_live_test.sh). Reads it with DataFileReader and compares it with
// what the fixture did:
//
//   check_data FILE --calls N [--function add] [--threads T] [--values seq|sum|none]
//              [--insn PATH HEX]
//
//   --calls N      entry samples == return samples == N
//   --function F   every probe is on function F
//   --threads T    samples come from exactly T threads
//   --values seq   per thread, entry k carries %x0 = k, %x1 = 10 k (workload's add(i, 10 i)),
//                  and its return $retval = %x0 + %x1
//   --values sum   only $retval = %x0 + %x1 (fx_lib_add(i, 1), fx_lib_add(i, i))
//   --lr-trampoline  entries carry %lr (the caller's return address) and returns carry
//                  %lr too: at a return probe lr holds the uretprobe trampoline's address,
//                  one address, on another page than every caller's
//   --exits        the returns come from exit probes (ProbeKind::Exit, on the function's
//                  own ret), not from return probes, and every sample carries a stack pointer
//   --insn P HEX   the 4 bytes at each probe's file offset in the host copy P of the
//                  probed file are the instruction HEX (0xd503245f: `bti c`)
//   --usdt         the probes are USDT probes (all plain uprobes): one named X__done,
//                  X__return or X__end is the return side, the others the entry side
//   --why-slow US --root DIR --stacks-at entry|return|none
//                  the why_slow fixture (N rounds of US us), recorded with -g and maybe
//                  --off-cpu: each call's caller, stack and off-CPU share
//                  (scripts/arm64/why_slow_check.h); DIR is the host's copy of the
//                  guest's files, which the stacks' frames are named by
// Always: the file is complete and undamaged, its arch is arm64, nothing was lost,
// every probe's recorded count equals the kernel's and the samples in the file.
// Prints "check: ok: ..." or "check: FAIL: reason" (the first few reasons) and exits 0 / 1.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "uprof/store/data_file.h"
#include "why_slow_check.h"

namespace {

struct Options {
  std::string file;
  uint64_t calls = 0;
  std::string function;
  int threads = 0;
  std::string values = "none";
  std::string insn_path;
  uint32_t insn = 0;
  bool lr_trampoline = false;
  bool exits = false;
  bool usdt = false;
  uint64_t why_slow_us = 0;
  std::string root;
  std::string stacks_at = "none";
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The entry side of a call: an entry probe, or with --usdt a probe that is no pair's closing half.
bool entry_side(const uprof::ProbeInfo& p, const Options& o) {
  if (!o.usdt) return p.kind == uprof::ProbeKind::Entry;
  if (!p.usdt) return false;
  return !(ends_with(p.function, "__done") || ends_with(p.function, "__return") || ends_with(p.function, "__end"));
}

struct Failures {
  std::vector<std::string> list;
  template <class... Parts>
  void add(Parts&&... parts) {
    std::ostringstream os;
    (os << ... << parts);
    list.push_back(os.str());
  }
};

int usage() {
  std::fprintf(stderr,
               "usage: check_data FILE --calls N [--function F] [--threads T] [--values seq|sum|none] "
               "[--insn PATH HEX] [--lr-trampoline] [--exits] [--usdt] [--why-slow US --root DIR "
               "--stacks-at entry|return|none]\n");
  return 2;
}

// Index of the value named `name` in a probe's value list, -1 when absent.
int value_index(const uprof::ProbeInfo& p, const std::string& name) {
  for (std::size_t i = 0; i < p.values.size(); i++)
    if (p.values[i].name == name) return static_cast<int>(i);
  return -1;
}

bool read_u32_at(const std::string& path, uint64_t offset, uint32_t& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f.seekg(static_cast<std::streamoff>(offset))) return false;
  unsigned char b[4];
  if (!f.read(reinterpret_cast<char*>(b), 4)) return false;
  out = b[0] | b[1] << 8 | b[2] << 16 | static_cast<uint32_t>(b[3]) << 24;  // aarch64 code is little-endian
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace uprof;
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--calls" && (v = next())) o.calls = std::strtoull(v, nullptr, 10);
    else if (a == "--function" && (v = next())) o.function = v;
    else if (a == "--threads" && (v = next())) o.threads = std::atoi(v);
    else if (a == "--values" && (v = next())) o.values = v;
    else if (a == "--lr-trampoline") o.lr_trampoline = true;
    else if (a == "--exits") o.exits = true;
    else if (a == "--usdt") o.usdt = true;
    else if (a == "--why-slow" && (v = next())) o.why_slow_us = std::strtoull(v, nullptr, 10);
    else if (a == "--root" && (v = next())) o.root = v;
    else if (a == "--stacks-at" && (v = next())) o.stacks_at = v;
    else if (a == "--insn" && (v = next()) && i + 1 < argc) {
      o.insn_path = v;
      o.insn = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 16));
    } else if (a[0] != '-' && o.file.empty()) o.file = a;
    else return usage();
  }
  if (o.file.empty() || o.calls == 0 || (o.values != "seq" && o.values != "sum" && o.values != "none"))
    return usage();
  if (o.why_slow_us && (o.root.empty() || (o.stacks_at != "entry" && o.stacks_at != "return" && o.stacks_at != "none")))
    return usage();

  auto reader = DataFileReader::open(o.file);
  if (!reader) {
    std::printf("check: FAIL: %s\n", reader.error().message.c_str());
    return 1;
  }
  Failures fail;
  if (reader->arch() != Arch::Arm64) fail.add("arch is ", arch_info(reader->arch()).name, ", not arm64");
  const auto& probes = reader->probes();
  int entry_probes = 0, return_probes = 0;
  for (const auto& p : probes) {
    (entry_side(p, o) ? entry_probes : return_probes)++;
    if (o.exits && p.kind == ProbeKind::Return) fail.add("probe ", p.index, " is a return probe, not an exit probe");
    if (o.exits && !p.frame) fail.add("probe ", p.index, " carries no stack pointer");
    if (!o.function.empty() && p.function != o.function)
      fail.add("probe ", p.index, " is on '", p.function, "', not '", o.function, "'");
    if (!o.insn_path.empty()) {
      uint32_t word = 0;
      if (!read_u32_at(o.insn_path, p.file_offset, word))
        fail.add("cannot read ", o.insn_path, " at offset 0x", std::hex, p.file_offset);
      else if (word != o.insn)
        fail.add("probe ", p.index, ": instruction at 0x", std::hex, p.file_offset, " is 0x", word, ", not 0x",
                 o.insn);
    }
  }
  if (entry_probes == 0 || return_probes == 0)
    fail.add(entry_probes, " entry and ", return_probes, " return probes (want both)");

  // Per thread: a shadow stack of the entries' (%x0, %x1), and the next expected %x0.
  struct Thread {
    std::vector<std::pair<uint32_t, uint32_t>> open;
    uint32_t next = 0;
    uint64_t last_time = 0;
  };
  std::map<uint32_t, Thread> threads;
  std::vector<uint64_t> per_probe(probes.size());
  uint64_t events = 0, entries = 0, returns = 0, lost_events = 0, zero_frames = 0;
  std::set<uint64_t> entry_lr, return_lr;
  WhySlowCheck why_slow(o.root, o.stacks_at, o.why_slow_us);
  Event e;
  while (reader->next(e)) {
    events++;
    if (e.kind == EventKind::Lost) lost_events += e.lost;
    if (o.why_slow_us) {
      const ProbeInfo* p = e.kind == EventKind::Sample && e.probe < probes.size() ? &probes[e.probe] : nullptr;
      why_slow.on_event(e, p, p && entry_side(*p, o));
    }
    if (e.kind != EventKind::Sample) continue;
    if (o.exits && e.frame == 0) zero_frames++;
    if (e.probe >= probes.size()) {
      fail.add("sample of unknown probe ", e.probe);
      continue;
    }
    per_probe[e.probe]++;
    const ProbeInfo& p = probes[e.probe];
    Thread& t = threads[e.tid];
    if (e.time < t.last_time) fail.add("tid ", e.tid, ": time goes back at event ", events);
    t.last_time = e.time;
    if (int il = value_index(p, "%lr"); il >= 0 && il < e.nvalues)
      (entry_side(p, o) ? entry_lr : return_lr).insert(e.values[il]);
    if (entry_side(p, o)) {
      entries++;
      int ix0 = value_index(p, "%x0"), ix1 = value_index(p, "%x1");
      if (o.values == "none") continue;
      if (ix0 < 0 || ix1 < 0 || ix0 >= e.nvalues || ix1 >= e.nvalues) {
        fail.add("entry probe ", p.index, " does not carry %x0 and %x1");
        break;
      }
      auto x0 = static_cast<uint32_t>(e.values[ix0]), x1 = static_cast<uint32_t>(e.values[ix1]);
      if (o.values == "seq") {
        if (x0 != t.next || x1 != 10 * x0)
          fail.add("tid ", e.tid, ": entry ", t.next, " has %x0=", x0, " %x1=", x1, " (want ", t.next, ", ",
                   10 * t.next, ")");
        t.next = x0 + 1;
      }
      t.open.push_back({x0, x1});
    } else {
      returns++;
      if (o.values == "none") continue;
      int ir = value_index(p, "$retval");
      if (ir < 0 || ir >= e.nvalues) {
        fail.add("return probe ", p.index, " does not carry $retval");
        break;
      }
      if (t.open.empty()) {
        fail.add("tid ", e.tid, ": a return without an entry");
        continue;
      }
      auto [x0, x1] = t.open.back();
      t.open.pop_back();
      auto ret = static_cast<uint32_t>(e.values[ir]);
      if (ret != x0 + x1) fail.add("tid ", e.tid, ": add(", x0, ", ", x1, ") returned ", ret);
    }
    if (fail.list.size() > 20) break;
  }

  for (const auto& problem : reader->problems()) fail.add("reader: ", problem);
  const auto& trailer = reader->trailer();
  if (!trailer) {
    fail.add("no trailer: the file is cut short");
  } else {
    if (trailer->lost != 0 || lost_events != 0) fail.add(trailer->lost, " lost (", lost_events, " in lost events)");
    if (trailer->events != events) fail.add("trailer says ", trailer->events, " events, the file holds ", events);
    if (trailer->counts.size() != probes.size())
      fail.add("trailer has ", trailer->counts.size(), " probe counts for ", probes.size(), " probes");
    for (std::size_t i = 0; i < trailer->counts.size() && i < probes.size(); i++) {
      const auto& c = trailer->counts[i];
      if (c.recorded != c.kernel || c.recorded != per_probe[i])
        fail.add("probe ", i, ": recorded ", c.recorded, ", kernel counted ", c.kernel, ", file holds ",
                 per_probe[i]);
    }
  }
  if (zero_frames) fail.add(zero_frames, " samples without a stack pointer");
  if (entries != o.calls || returns != o.calls)
    fail.add(entries, " entries and ", returns, " returns, want ", o.calls, " of each");
  if (o.threads && static_cast<int>(threads.size()) != o.threads)
    fail.add("samples from ", threads.size(), " threads, want ", o.threads);
  for (const auto& [tid, t] : threads)
    if (!t.open.empty()) fail.add("tid ", tid, ": ", t.open.size(), " entries without a return");

  std::string why_slow_note;
  if (o.why_slow_us) {
    for (const auto& problem : why_slow.finish()) fail.add(problem);
    why_slow_note = "; " + why_slow.summary();
  }
  std::string lr_note;
  if (o.lr_trampoline) {
    if (entry_lr.empty() || return_lr.size() != 1) {
      fail.add("%lr: ", entry_lr.size(), " distinct values at entries, ", return_lr.size(),
               " at returns (want >= 1 and exactly 1: the trampoline)");
    } else {
      uint64_t tramp = *return_lr.begin();
      for (uint64_t lr : entry_lr)
        if ((lr >> 12) == (tramp >> 12))
          fail.add("%lr at an entry (0x", std::hex, lr, ") is on the trampoline's page (0x", tramp, ")");
      std::ostringstream os;
      os << ", return %lr = trampoline 0x" << std::hex << tramp << " (callers: 0x" << *entry_lr.begin() << ")";
      lr_note = os.str();
    }
  }
  if (!fail.list.empty()) {
    std::printf("check: FAIL: %s", fail.list[0].c_str());
    for (std::size_t i = 1; i < fail.list.size() && i < 5; i++) std::printf("; %s", fail.list[i].c_str());
    if (fail.list.size() > 5) std::printf("; ... (%zu problems)", fail.list.size());
    std::printf("\n");
    return 1;
  }
  std::printf("check: ok: arm64, %llu entries == %llu returns == calls, %zu threads, 0 lost, recorded == kernel "
              "for %zu probes%s\n",
              static_cast<unsigned long long>(entries), static_cast<unsigned long long>(returns), threads.size(),
              probes.size(),
              (std::string(o.values == "seq"   ? ", %x0/%x1 = i/10i in order, $retval = sum"
                           : o.values == "sum" ? ", $retval = %x0 + %x1"
                                               : "") +
               lr_note + why_slow_note)
                  .c_str());
  return 0;
}
