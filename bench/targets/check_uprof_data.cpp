// check_uprof_data: exactness of a uprof data file recorded on `hot MODE N` by
// scripts/compare_record.sh (entry values %di %si, return value $retval).
//
//   check_uprof_data FILE N
//
// Prints one line of key=value pairs:
//   samples   sample events in the file
//   entries / returns
//   dups      samples identical to an earlier one (same probe, tid, time and values)
//   lost      sum of the file's LOST events (what the kernel said it dropped)
//   missing   2N - unique samples (loss seen by counting, whatever the kernel said)
//   gaps      places where a thread's call sequence breaks (an entry or a return missing)
//   bad       wrong values: b != a ^ 0x55, or a return value != a + b of its entry
//   kernel    the trailer's kernel hit counts, summed
//   bytes     the file's size
// Exit status 0 when the file could be read to its trailer.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "uprof/store/data_file.h"

namespace {

struct Key {
  uint32_t probe, tid;
  uint64_t time, v0, v1;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    uint64_t h = k.time * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t{k.probe} << 32 | k.tid) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    h ^= k.v0 * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
    h ^= k.v1 + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h);
  }
};

// Whether r is the return value a + (a ^ 0x55) of some call a later than `after`.
bool later_call_returns(int64_t after, int64_t r) {
  for (int64_t a = r / 2 - 0x60; a <= r / 2 + 0x60; a++)
    if (a > after && a + (a ^ 0x55) == r) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: check_uprof_data FILE N\n");
    return 2;
  }
  const uint64_t n = std::strtoull(argv[2], nullptr, 10);
  auto opened = uprof::DataFileReader::open(argv[1]);
  if (!opened) {
    std::fprintf(stderr, "check_uprof_data: %s\n", opened.error().message.c_str());
    return 1;
  }
  uprof::DataFileReader& r = *opened;

  uint64_t samples = 0, entries = 0, returns = 0, dups = 0, lost = 0, gaps = 0, bad = 0;
  // Duplicates can only share a timestamp, so only the samples of the current
  // timestamp are remembered (the file is in time order).
  std::unordered_set<Key, KeyHash> same_time;
  uint64_t cur_time = ~uint64_t{0};
  struct ThreadState {
    int64_t next_a = 0;
    bool have_entry = false;
    uint64_t a = 0, b = 0;
  };
  std::unordered_map<uint32_t, ThreadState> threads;

  uprof::Event e;
  while (r.next(e)) {
    if (e.kind == uprof::EventKind::Lost) {
      lost += e.lost;
      continue;
    }
    if (e.kind != uprof::EventKind::Sample) continue;
    samples++;
    if (e.time != cur_time) {
      same_time.clear();
      cur_time = e.time;
    }
    Key k{e.probe, e.tid, e.time, e.nvalues > 0 ? e.values[0] : 0, e.nvalues > 1 ? e.values[1] : 0};
    if (!same_time.insert(k).second) {
      dups++;
      continue;
    }
    if (e.probe >= r.probes().size()) {
      bad++;
      continue;
    }
    ThreadState& t = threads[e.tid];
    if (r.probes()[e.probe].kind == uprof::ProbeKind::Entry) {
      entries++;
      int32_t a = static_cast<int32_t>(e.values[0]);
      int32_t b = static_cast<int32_t>(e.values[1]);
      if (e.nvalues < 2 || b != (a ^ 0x55)) bad++;
      if (a != t.next_a || t.have_entry) gaps++;
      t.next_a = static_cast<int64_t>(a) + 1;  // resynchronise after a loss
      t.have_entry = true;
      t.a = static_cast<uint64_t>(a);
      t.b = static_cast<uint64_t>(b);
    } else {
      returns++;
      uint32_t want = static_cast<uint32_t>(t.a + t.b);
      if (!t.have_entry) gaps++;
      else if (e.nvalues >= 1 && static_cast<uint32_t>(e.values[0]) != want &&
               later_call_returns(static_cast<int64_t>(t.a), static_cast<int64_t>(static_cast<uint32_t>(e.values[0]))))
        gaps++;  // this entry's return and the next entries were lost: the value is a later call's
      else if (e.nvalues < 1 || static_cast<uint32_t>(e.values[0]) != want) bad++;
      t.have_entry = false;
    }
  }
  uint64_t kernel = 0;
  if (r.trailer())
    for (const auto& c : r.trailer()->counts) kernel += c.kernel;
  uint64_t unique = samples - dups;
  long long missing = static_cast<long long>(2 * n) - static_cast<long long>(unique);
  std::printf("samples=%llu entries=%llu returns=%llu dups=%llu lost=%llu missing=%lld gaps=%llu bad=%llu "
              "kernel=%llu bytes=%llu\n",
              (unsigned long long)samples, (unsigned long long)entries, (unsigned long long)returns,
              (unsigned long long)dups, (unsigned long long)lost, missing, (unsigned long long)gaps,
              (unsigned long long)bad,
              (unsigned long long)kernel, (unsigned long long)r.file_size());
  for (const auto& p : r.problems()) std::fprintf(stderr, "check_uprof_data: %s\n", p.c_str());
  return r.trailer() ? 0 : 1;
}
