// What `uprof report` pays for callers (record -g) and on/off-CPU times (--off-cpu), per
// call: the same 200,000 calls of one function read from a data file without stacks,
// with 16-frame stacks (64 distinct stacks through 8 call sites), and with off-CPU
// totals too. The frames name this benchmark's own executable, so that the names come
// from a real file's symbols and DWARF, once per distinct frame.
//
//   build/bench/report_stacks_bench [--benchmark_repetitions=5 --benchmark_report_aggregates_only=true]
//
//   BM_Report/0   no stacks: build_report as every report runs it
//   BM_Report/1   stacks: the calls by stack and call site, named at the end
//   BM_Report/2   stacks and off-CPU times
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "uprof/analyse/report_model.h"
#include "uprof/resolve/image.h"
#include "uprof/store/data_file.h"
#include "uprof/resolve/elf/offset.h"

namespace uprof {
namespace {

constexpr uint64_t kCalls = 200'000;

std::string write_file(int mode) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string path =
      (std::filesystem::temp_directory_path() / ("uprof_report_stacks_bench_" + std::to_string(getpid()) + "_" +
                                                 std::to_string(mode)))
          .string();
  std::vector<ProbeInfo> probes(2);
  for (uint32_t i = 0; i < 2; ++i) {
    probes[i].index = i;
    probes[i].kind = i == 0 ? ProbeKind::Entry : ProbeKind::Return;
    probes[i].function = probes[i].spec = probes[i].row = "work";
    probes[i].role = i == 0 ? RowRole::Entry : RowRole::Return;
    probes[i].path = self;
    probes[i].stack = mode >= 1;
    probes[i].offcpu = mode >= 2;
  }
  auto w = DataFileWriter::create(path, RecordingMeta{}, probes);
  if (!w) return {};
  // Return addresses spread over the executable's code: 8 call sites, 8 stacks each.
  auto img = Image::load(self, DebugSearch{});
  std::vector<uint64_t> code;
  if (img)
    for (const Function& f : (*img)->functions.functions())
      if (f.size > 16 && code.size() < 64)
        if (auto off = vaddr_to_offset((*img)->elf.loads(), f.addr + f.size / 2)) code.push_back(*off);
  if (code.size() < 24) code.assign(64, 0x1000);
  Event obj;
  obj.kind = EventKind::Object;
  obj.object = 1;
  obj.path = self;
  obj.build_id = img ? (*img)->elf.build_id() : "";
  (void)w->add(obj);
  uint64_t t = 1000;
  OffCpuTimes off{};
  for (uint64_t i = 0; i < kCalls; ++i) {
    Event e;
    e.kind = EventKind::Sample;
    e.pid = e.tid = 7;
    if (mode >= 1)
      for (std::size_t f = 0; f < 16; ++f) e.stack.push_back({1, code[(f == 0 ? i % 8 : 8 + (i / 8 + f) % 8 + f) % code.size()]});
    e.probe = 0;
    e.time = t;
    e.offcpu = off;
    (void)w->add(e);
    off[3] += 500;
    e.probe = 1;
    e.time = t + 1000 + i % 977;
    e.offcpu = off;
    (void)w->add(e);
    t += 3000;
  }
  Trailer tr;
  tr.counts.resize(2);
  tr.end_monotonic_ns = t;
  (void)w->finish(tr);
  return path;
}

void BM_Report(benchmark::State& state) {
  const std::string path = write_file(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto m = build_report(path, AggregateOptions{});
    if (!m) state.SkipWithError(m.error().message.c_str());
    benchmark::DoNotOptimize(m);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kCalls));
  std::filesystem::remove(path);
}
BENCHMARK(BM_Report)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace uprof

BENCHMARK_MAIN();
