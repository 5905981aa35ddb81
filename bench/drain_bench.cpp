// What the drain costs per event, in user space: a BPF ring record becomes an Event
// (BpfRecordConverter), waits in the time-order queues (EventOrderer) and is encoded
// into the data file (DataFileWriter, on disk), each stage alone and all three as the
// BPF engine runs them. The records are shaped like `-e add` on two CPUs: an entry
// with two registers and a return with the return value, alternating.
//
//   build/bench/drain_bench [--benchmark_repetitions=5 --benchmark_report_aggregates_only=true]
//
//   BM_Convert        record bytes -> Event (convert_into, as the engine does)
//   BM_Order          push + emit in time order, passes of 16,384 events
//   BM_Write          Event -> data file
//   BM_Drain          all three: events per second is what one core can drain
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "uprof/drain/event_order.h"
#include "uprof/engine/bpf/bpf_capture_abi.h"
#include "uprof/engine/bpf/bpf_records.h"
#include "uprof/store/data_file.h"

namespace uprof {
namespace {

constexpr std::size_t kPass = 16384;  // records per pass

CapturePlan plan() {
  CapturePlan p{.arch = Arch::X86_64, .probes = {}};
  p.probes.push_back({.probe = 0, .path = "/bin/app", .file_offset = 0x1139, .is_return = false, .reads = {},
                      .values = {ValueSpec{.name = "%di", .source = ValueSource::Register, .reg = 5},
                                 ValueSpec{.name = "%si", .source = ValueSource::Register, .reg = 4}}});
  p.probes.push_back({.probe = 1, .path = "/bin/app", .file_offset = 0x1139, .is_return = true, .reads = {},
                      .values = {ValueSpec{.name = "$retval", .source = ValueSource::ReturnValue, .reg = 0}}});
  return p;
}

std::vector<ProbeInfo> probe_table() {
  ProbeInfo e;
  e.spec = e.function = e.symbol = "add";
  e.path = "/bin/app";
  e.values = {ValueSpec{.name = "%di"}, ValueSpec{.name = "%si"}};
  ProbeInfo r = e;
  r.index = 1;
  r.kind = ProbeKind::Return;
  r.values = {ValueSpec{.name = "$retval", .source = ValueSource::ReturnValue}};
  return {e, r};
}

// One pass's records as the ring holds them: CPU 0 and CPU 1 interleaved, each in time
// order, in the size class the BPF program reserves (2 slots).
struct Records {
  std::vector<std::byte> bytes;
  std::vector<std::size_t> offsets;
  static constexpr std::size_t kSize = sizeof(uprof_bpf_record) + 16;

  explicit Records(std::size_t n) : bytes(n * kSize) {
    for (std::size_t i = 0; i < n; i++) {
      uprof_bpf_record h{};
      h.kind = UPROF_BPF_HIT;
      h.probe = static_cast<uint32_t>(i / 2 % 2);
      h.nvalues = h.probe ? 1 : 2;
      h.cpu = static_cast<uint16_t>(i % 2);
      h.pid = 1000;
      h.tid = 1000 + h.cpu;
      const uint64_t v[2] = {i, i ^ 0x55};
      std::memcpy(bytes.data() + i * kSize, &h, sizeof h);
      std::memcpy(bytes.data() + i * kSize + sizeof h, v, sizeof v);
      offsets.push_back(i * kSize);
    }
  }
  std::span<const std::byte> at(std::size_t i) const { return {bytes.data() + offsets[i], kSize}; }
  // Gives the pass its times: 100 ns apart, on from `t`.
  void stamp(uint64_t t) {
    for (std::size_t i = 0; i < offsets.size(); i++) {
      const uint64_t time = t + 100 * i;
      std::memcpy(bytes.data() + offsets[i] + offsetof(uprof_bpf_record, time), &time, 8);
    }
  }
};

std::string bench_file() {
  return (std::filesystem::temp_directory_path() / ("uprof_drain_" + std::to_string(getpid()))).string();
}

void BM_Convert(benchmark::State& state) {
  CapturePlan p = plan();
  BpfRecordConverter c(p);
  Records recs(kPass);
  recs.stamp(1'000'000);
  std::size_t i = 0;
  BpfEvent e;
  for (auto _ : state) {
    if (!c.convert_into(recs.at(i++ % kPass), e)) state.SkipWithError("convert");
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Convert);

// Passes of kPass events; each pass lets out the one before it.
void BM_Order(benchmark::State& state) {
  CapturePlan p = plan();
  BpfRecordConverter c(p);
  std::vector<BpfEvent> evs;
  Records recs(kPass);
  recs.stamp(0);
  for (std::size_t i = 0; i < kPass; i++) evs.push_back(*c.convert(recs.at(i)));
  EventOrderer order;
  uint64_t t = 1'000'000, out = 0;
  auto sink = [&](const Event& e) -> Status {
    out += e.time;
    return ok();
  };
  for (auto _ : state) {
    order.pass_started(t + 100 * kPass);
    for (auto& e : evs) {
      e.event.time += 100 * kPass;
      order.push(e.cpu, e.event);
    }
    if (!order.pass_ended(sink)) state.SkipWithError("emit");
    t += 100 * kPass;
  }
  benchmark::DoNotOptimize(out);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kPass));
}
BENCHMARK(BM_Order);

void BM_Write(benchmark::State& state) {
  CapturePlan p = plan();
  BpfRecordConverter c(p);
  std::vector<Event> evs;
  Records recs(kPass);
  recs.stamp(1'000'000);
  for (std::size_t i = 0; i < kPass; i++) evs.push_back(c.convert(recs.at(i))->event);
  const std::string path = bench_file();
  auto w = DataFileWriter::create(path, RecordingMeta{}, probe_table());
  if (!w) {
    state.SkipWithError(w.error().message.c_str());
    return;
  }
  for (auto _ : state) {
    for (const auto& e : evs)
      if (!w->add(e)) state.SkipWithError("write");
    if (!w->flush()) state.SkipWithError("flush");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kPass));
  state.counters["bytes_per_event"] = static_cast<double>(w->bytes_written()) /
                                      static_cast<double>(state.iterations() * kPass);
  std::filesystem::remove(path);
}
BENCHMARK(BM_Write);

// The BPF engine's pass (bpf_engine.cpp): convert each record, queue it, then write
// what the pass lets out and flush.
void BM_Drain(benchmark::State& state) {
  CapturePlan p = plan();
  BpfRecordConverter c(p);
  Records recs(kPass);
  const std::string path = bench_file();
  auto w = DataFileWriter::create(path, RecordingMeta{}, probe_table());
  if (!w) {
    state.SkipWithError(w.error().message.c_str());
    return;
  }
  EventOrderer order;
  auto sink = [&](const Event& e) -> Status { return w->add(e); };
  uint64_t t = 1'000'000;
  BpfEvent e;
  for (auto _ : state) {
    state.PauseTiming();
    recs.stamp(t);
    t += 100 * kPass;
    state.ResumeTiming();
    order.pass_started(t);
    for (std::size_t i = 0; i < kPass; i++) {
      if (!c.convert_into(recs.at(i), e)) state.SkipWithError("convert");
      order.push(e.cpu, e.event);
    }
    if (!order.pass_ended(sink) || !w->flush()) state.SkipWithError("write");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kPass));
  std::filesystem::remove(path);
}
BENCHMARK(BM_Drain);

}  // namespace
}  // namespace uprof

BENCHMARK_MAIN();
