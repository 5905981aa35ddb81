// Throughput of uprof's per-event stages, in events per second (Google Benchmark's
// items_per_second), on hand-built data shaped like a real recording: one entry probe
// with two registers and one return probe with the return value, alternating.
//
//   build/bench/throughput_bench [--benchmark_repetitions=5 --benchmark_report_aggregates_only=true]
//
//   BM_RingDrain        records out of an anonymous perf-layout ring (the drain pass)
//   BM_DecodeSample     PERF_RECORD_SAMPLE bytes -> Sample (record_decoder)
//   BM_DataFileWrite    events -> data file on disk (store, includes the file system)
//   BM_DataFileRead     data file -> events
//   BM_PairAndAggregate entry/return pairing + latency histograms (analyse)
#include <benchmark/benchmark.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <vector>

#include "uprof/analyse/aggregate.h"
#include "uprof/analyse/event_loop.h"
#include "uprof/analyse/pairing.h"
#include "uprof/drain/record_decoder.h"
#include "uprof/attach/ring_buffer.h"
#include "uprof/store/data_file.h"

namespace uprof {
namespace {

constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER;
constexpr uint64_t kRegs = (1u << 5) | (1u << 4);  // x86-64 DI, SI

// header | id | pid tid | time | abi | di | si
std::vector<std::byte> sample_record(uint64_t i) {
  std::vector<uint64_t> words{0, 42, (uint64_t{1000} << 32) | 1000, 1'000'000 + 100 * i, PERF_SAMPLE_REGS_ABI_64,
                              i, i ^ 0x55};
  perf_event_header h{.type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER,
                      .size = static_cast<uint16_t>(words.size() * 8)};
  std::memcpy(words.data(), &h, sizeof h);
  std::vector<std::byte> out(words.size() * 8);
  std::memcpy(out.data(), words.data(), out.size());
  return out;
}

SampleFormat format() {
  SampleFormat f;
  f.sample_type = kSampleType;
  f.regs_mask = kRegs;
  f.reg_count = 24;
  return f;
}

std::vector<ProbeInfo> probes() {
  ProbeInfo e;
  e.index = 0;
  e.kind = ProbeKind::Entry;
  e.spec = e.function = e.symbol = "add";
  e.path = "/bin/app";
  e.values = {ValueSpec{.name = "%di"}, ValueSpec{.name = "%si"}};
  ProbeInfo r = e;
  r.index = 1;
  r.kind = ProbeKind::Return;
  r.values = {ValueSpec{.name = "$retval", .source = ValueSource::ReturnValue}};
  return {e, r};
}

std::vector<Event> events(std::size_t n) {
  std::vector<Event> ev;
  ev.reserve(n);
  uint64_t t = 2'000'000;
  for (std::size_t i = 0; i < n; i++) {
    Event e;
    e.kind = EventKind::Sample;
    e.probe = static_cast<uint32_t>(i % 2);
    e.pid = e.tid = 1000 + static_cast<uint32_t>(i / 2 % 4);  // four threads
    e.time = t += 97 + (i * 7919) % 500;
    e.nvalues = e.probe ? 1 : 2;
    e.values[0] = i / 2;
    e.values[1] = (i / 2) ^ 0x55;
    ev.push_back(e);
  }
  return ev;
}

void BM_RingDrain(benchmark::State& state) {
  const std::size_t pages = 64;
  std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::size_t len = (1 + pages) * page;
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  auto* meta = static_cast<perf_event_mmap_page*>(p);
  meta->data_offset = page;
  meta->data_size = pages * page;
  auto rb = RingBuffer::adopt(UniqueMmap(p, len));
  if (!rb) {
    state.SkipWithError(rb.error().message.c_str());
    return;
  }
  auto* data = static_cast<std::byte*>(p) + page;
  std::size_t size = pages * page;
  auto rec = sample_record(1);
  uint64_t n = 0;
  for (auto _ : state) {
    // Play the kernel: fill the ring (a record may wrap the end), then drain it all.
    uint64_t head = meta->data_head;
    uint64_t tail = meta->data_tail;
    std::size_t k = 0;
    while (head - tail + rec.size() <= size) {
      std::size_t off = head & (size - 1), first = std::min(rec.size(), size - off);
      std::memcpy(data + off, rec.data(), first);
      std::memcpy(data, rec.data() + first, rec.size() - first);
      head += rec.size();
      k++;
    }
    std::atomic_ref<__u64>(meta->data_head).store(head, std::memory_order_release);
    uint64_t seen = 0;
    auto st = rb->drain([&](std::span<const std::byte> r) -> Status {
      seen += r.size();
      return ok();
    });
    benchmark::DoNotOptimize(seen);
    n += k;
  }
  state.SetItemsProcessed(static_cast<int64_t>(n));
}
BENCHMARK(BM_RingDrain);

void BM_DecodeSample(benchmark::State& state) {
  std::vector<std::vector<std::byte>> recs;
  for (uint64_t i = 0; i < 1024; i++) recs.push_back(sample_record(i));
  SampleFormat f = format();
  std::size_t i = 0;
  for (auto _ : state) {
    auto s = decode_sample(recs[i++ & 1023], f);
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeSample);

std::string bench_file() { return (std::filesystem::temp_directory_path() / ("uprof_tp_" + std::to_string(getpid()))).string(); }

Status write_file(const std::string& path, const std::vector<Event>& ev) {
  RecordingMeta meta;
  meta.start_monotonic_ns = 1'000'000;
  UPROF_ASSIGN(DataFileWriter w, DataFileWriter::create(path, meta, probes()));
  for (const auto& e : ev) UPROF_TRY(w.add(e));
  Trailer t;
  t.events = ev.size();
  t.counts = {{ev.size() / 2, ev.size() / 2}, {ev.size() / 2, ev.size() / 2}};
  return w.finish(t);
}

void BM_DataFileWrite(benchmark::State& state) {
  auto ev = events(static_cast<std::size_t>(state.range(0)));
  std::string path = bench_file();
  for (auto _ : state) {
    auto st = write_file(path, ev);
    if (!st) state.SkipWithError(st.error().message.c_str());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.counters["bytes_per_event"] =
      static_cast<double>(std::filesystem::file_size(path)) / static_cast<double>(state.range(0));
  std::filesystem::remove(path);
}
BENCHMARK(BM_DataFileWrite)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_DataFileRead(benchmark::State& state) {
  std::string path = bench_file();
  if (auto st = write_file(path, events(static_cast<std::size_t>(state.range(0)))); !st) {
    state.SkipWithError(st.error().message.c_str());
    return;
  }
  for (auto _ : state) {
    auto r = DataFileReader::open(path);
    Event e;
    uint64_t n = 0;
    while (r->next(e)) n++;
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  std::filesystem::remove(path);
}
BENCHMARK(BM_DataFileRead)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// range(1) = 1: with per-probe hit costs (a file that stores them), so that each call
// also counts the cost of the probe hits inside it.
void BM_PairAndAggregate(benchmark::State& state) {
  auto ev = events(static_cast<std::size_t>(state.range(0)));
  ProbeFunctions fns = group_probes(probes());
  std::vector<uint64_t> hit_costs;
  if (state.range(1)) hit_costs.assign(probes().size(), 1'500);
  for (auto _ : state) {
    Aggregator agg(fns, AggregateOptions{});
    EventLoop loop(fns, AggregateFilter{}, 0, agg, hit_costs);
    for (const auto& e : ev) loop.add(e);
    loop.finish();
    benchmark::DoNotOptimize(agg.groups().size());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_PairAndAggregate)->Args({1'000'000, 0})->Args({1'000'000, 1})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace uprof

BENCHMARK_MAIN();
