// What one probe hit costs the probed thread, per call of a function that does nothing
// (it returns a + b), through uprof's own event code: the attr builders, perf_event_open
// on the uprobe PMU, a ring drained by a second thread as `uprof record` drains it.
//
//   build/bench/probe_hit_bench [--benchmark_repetitions=5 --benchmark_report_aggregates_only=true]
//
// Rows are probe_hit/CLASS/SETUP, CLASS being the target's first instruction
// (bench_targets.h: step = lea, single-stepped by the kernel; push = push %rbp,
// emulated; nop5 = a 5-byte nop, optimized into a call to a trampoline on 6.18):
//
//   unprobed          the call alone
//   count             an entry uprobe that counts and samples nothing
//   entry             entry samples with the two argument registers
//   return            return samples with the return register
//   entry+return/R    both, the entry sample with R argument registers (0, 2 or 6) and
//                     the return sample with the return register (none when R = 0)
//
// Google Benchmark's CPU column is the benchmark thread's CPU time, which is where the
// kernel charges a uprobe's trap, handler and sample, so
//   added per hit = (CPU time of a row - CPU time of `unprobed`) / hits_per_call.
// Counters: hits_per_call (the kernel's count / iterations: 1 or 2 when every call
// fired), lost (samples the kernel dropped because the ring was full: non-zero makes
// the row look cheaper than it is; the row is then labelled LOST SAMPLES).
//
// Needs root and the uprobe PMU; without them each row says why it was skipped.
#include <benchmark/benchmark.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/attach/event_attr.h"
#include "uprof/attach/perf_event.h"
#include "uprof/attach/uprobe_pmu.h"
#include "uprof/calibrate/bench_targets.h"
#include "uprof/attach/ring_buffer.h"
#include "uprof/resolve/resolver.h"

namespace uprof {
namespace {

constexpr std::size_t kRingPages = 512;  // 2 MiB: ~25,000 samples of 6 registers

enum class Setup { Unprobed, Count, Entry, Return, Both };

struct Row {
  Setup setup;
  int regs;  // argument registers in the entry sample
  std::string name;
};

// The first `n` integer argument registers of the host, as a sample_regs_user mask.
uint64_t arg_regs_mask(int n) {
  const ArchInfo& a = arch_info(host_arch());
  uint64_t m = 0;
  for (int i = 0; i < n && i < static_cast<int>(a.int_arg_regs.size()); i++) m |= 1ull << a.int_arg_regs[i];
  return m;
}

Result<uint64_t> target_file_offset(const BenchTarget& t, const std::string& self) {
  Resolver resolver;
  UPROF_ASSIGN(ProbeSpec spec, parse_probe_spec(t.symbol));
  UPROF_ASSIGN(std::vector<ResolvedProbe> probes, resolver.resolve(spec, self));
  if (probes.size() != 1) return err("bench: ", t.symbol, " resolved to ", probes.size(), " probes");
  return probes[0].file_offset;
}

// The probes of one row, open and enabled on this thread, with their ring drained by a
// second thread until the object goes.
class ProbedSelf {
 public:
  static Result<std::unique_ptr<ProbedSelf>> open(const Row& row, const std::string& self, uint64_t offset) {
    auto p = std::unique_ptr<ProbedSelf>(new ProbedSelf);
    UPROF_ASSIGN(UprobePmu pmu, read_uprobe_pmu(uprobe_pmu_dir()));
    AttrOptions opts;
    opts.start = StartMode::Explicit;
    opts.wakeup_watermark = static_cast<uint32_t>(kRingPages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)) / 4);  // wake the drainer at a quarter full
    opts.count_lost = kernel_supports_format_lost();
    p->read_format_ = opts.count_lost ? PERF_FORMAT_LOST : 0;
    const uint8_t ret_reg = arch_info(host_arch()).return_reg;
    auto add = [&](bool is_return, ProbeReads content, bool counting) -> Status {
      p->targets_.push_back(std::make_unique<UprobeTarget>(UprobeTarget{self, offset, is_return}));
      perf_event_attr a = build_uprobe_attr(pmu, *p->targets_.back(), content, opts);
      // One thread, one ring: a per-task event that is inherited cannot be mmapped.
      a.inherit = 0;
      if (counting) {
        a.sample_period = 0;
        a.sample_type = 0;
      }
      UPROF_ASSIGN(UniqueFd fd, open_perf_event(a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC, p->targets_.back().get()));
      p->fds_.push_back(std::move(fd));
      return ok();
    };
    switch (row.setup) {
      case Setup::Unprobed: return p;
      case Setup::Count: UPROF_TRY(add(false, {}, true)); break;
      case Setup::Entry: UPROF_TRY(add(false, {arg_regs_mask(row.regs), 0}, false)); break;
      case Setup::Return: UPROF_TRY(add(true, {1ull << ret_reg, 0}, false)); break;
      case Setup::Both:
        UPROF_TRY(add(false, {arg_regs_mask(row.regs), 0}, false));
        UPROF_TRY(add(true, {row.regs ? 1ull << ret_reg : 0, 0}, false));
        break;
    }
    if (row.setup != Setup::Count) {
      UPROF_ASSIGN(RingBuffer ring, RingBuffer::map(p->fds_[0].get(), kRingPages));
      p->ring_.emplace_back(std::move(ring));
      for (std::size_t i = 1; i < p->fds_.size(); i++) UPROF_TRY(redirect_output(p->fds_[i].get(), p->fds_[0].get()));
      p->drainer_ = std::thread([raw = p.get()] { raw->drain_until_stopped(); });
    }
    for (const auto& fd : p->fds_) UPROF_TRY(enable_event(fd.get()));
    return p;
  }

  ~ProbedSelf() {
    for (const auto& fd : fds_) (void)disable_event(fd.get());
    stop_ = true;
    if (drainer_.joinable()) drainer_.join();
  }

  // Hits and dropped samples so far, over all of the row's probes.
  Result<CounterValue> counts() const {
    CounterValue total;
    total.lost = 0;
    for (const auto& fd : fds_) {
      UPROF_ASSIGN(CounterValue v, read_counter(fd.get(), read_format_));
      total.count += v.count;
      *total.lost += v.lost.value_or(0);
    }
    return total;
  }

  uint64_t records() const { return records_.load(); }

 private:
  ProbedSelf() = default;

  void drain_until_stopped() {
    RingBuffer& ring = ring_[0];
    auto count = [this](std::span<const std::byte>) -> Status {
      records_.fetch_add(1, std::memory_order_relaxed);
      return ok();
    };
    while (!stop_) {
      pollfd pfd{ring.fd(), POLLIN, 0};
      ::poll(&pfd, 1, 10);
      if (!ring.drain(count)) return;
    }
    (void)ring.drain(count);
  }

  std::vector<std::unique_ptr<UprobeTarget>> targets_;  // attr.config1 points into them
  std::vector<UniqueFd> fds_;
  std::vector<RingBuffer> ring_;
  uint64_t read_format_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> records_{0};
  std::thread drainer_;
};

void probe_hit(benchmark::State& state, const BenchTarget* t, Row row) {
  std::string self = std::filesystem::read_symlink("/proc/self/exe");
  auto offset = target_file_offset(*t, self);
  if (!offset) return state.SkipWithError(offset.error().message.c_str());
  auto probed = ProbedSelf::open(row, self, *offset);
  if (!probed) return state.SkipWithError(probed.error().message.c_str());
  long (*fn)(long, long) = t->fn;
  benchmark::DoNotOptimize(fn);
  // Warm-up, outside the timing: the first hits set up the kernel's per-task state and,
  // for a nop5, the trampoline (milliseconds).
  for (long i = 0; i < 100; i++) benchmark::DoNotOptimize(fn(i, i ^ 0x55));
  auto before = (*probed)->counts();
  if (!before) return state.SkipWithError(before.error().message.c_str());
  long i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(fn(i, i ^ 0x55));
    i++;
  }
  auto after = (*probed)->counts();
  if (!after) return state.SkipWithError(after.error().message.c_str());
  double iters = static_cast<double>(state.iterations());
  double lost = static_cast<double>(*after->lost - *before->lost);
  state.counters["hits_per_call"] = static_cast<double>(after->count - before->count) / iters;
  state.counters["lost"] = lost;
  // Not SkipWithError: Google Benchmark 1.7 aborts when one repetition of a row errs
  // and the others do not.
  if (lost > 0) state.SetLabel("LOST SAMPLES: the ring filled, this time is too low");
}

}  // namespace
}  // namespace uprof

int main(int argc, char** argv) {
  using namespace uprof;
  const std::vector<Row> rows = {
      {Setup::Unprobed, 0, "unprobed"},        {Setup::Count, 0, "count"},
      {Setup::Entry, 2, "entry"},              {Setup::Return, 0, "return"},
      {Setup::Both, 0, "entry+return/0"},      {Setup::Both, 2, "entry+return/2"},
      {Setup::Both, 6, "entry+return/6"},
  };
  for (const BenchTarget& t : bench_targets())
    for (const Row& row : rows)
      benchmark::RegisterBenchmark(("probe_hit/" + std::string(t.short_name) + "/" + row.name).c_str(), probe_hit, &t,
                                   row);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
