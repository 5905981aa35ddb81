// The resolver on large real binaries: listing every function (symbols read,
// aliases grouped, C++ names demangled, offsets computed) and resolving one name.
//   build/bench/resolve_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include "uprof/present/probe_listing.h"
#include "uprof/resolve/resolver.h"

namespace {

const char* kLibc = "/lib/x86_64-linux-gnu/libc.so.6";
const char* kPython = "/usr/bin/python3.11";

void BM_ListAll(benchmark::State& state, const char* path) {
  std::size_t n = 0;
  for (auto _ : state) {
    auto img = uprof::Image::load(path, {});
    if (!img) {
      state.SkipWithError(img.error().message.c_str());
      return;
    }
    auto [text, count] = uprof::render_function_list(**img, "", nullptr);
    benchmark::DoNotOptimize(text.data());
    n = count;
  }
  state.counters["functions"] = static_cast<double>(n);
}

void BM_ResolveOne(benchmark::State& state, const char* path, const char* spec_text) {
  auto spec = uprof::parse_probe_spec(spec_text);
  for (auto _ : state) {
    uprof::Resolver r;  // a fresh resolver: the file is opened and read every time
    auto p = r.resolve(*spec, path);
    if (!p) {
      state.SkipWithError(p.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(p->front().file_offset);
  }
}

BENCHMARK_CAPTURE(BM_ListAll, libc, kLibc)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ListAll, python3_11, kPython)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ResolveOne, libc_malloc, kLibc, "malloc")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ResolveOne, python_PyObject_Call, kPython, "PyObject_Call")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
