#include "uprof/calibrate/attach_bench.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <filesystem>

#include "uprof/engine/bpf/bpf_attach.h"
#include "uprof/engine/bpf/bpf_engine.h"
#include "uprof/resolve/elf/elf_file.h"
#include "uprof/resolve/elf/function_table.h"
#include "uprof/resolve/elf/offset.h"

namespace uprof {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The first `n` functions of `lib` as entry + return probes with nothing to read.
Result<CapturePlan> plan_for(const std::string& lib, std::size_t n) {
  UPROF_ASSIGN(ElfFile elf, ElfFile::open(lib));
  const FunctionTable table = FunctionTable::build(elf.symbols());
  CapturePlan plan{.arch = elf.arch(), .probes = {}};
  for (const Function& f : table.functions()) {
    if (plan.probes.size() >= 2 * n) break;
    if (f.is_ifunc || f.size == 0) continue;
    auto off = vaddr_to_offset(elf.loads(), f.addr);
    if (!off) continue;
    for (bool ret : {false, true})
      plan.probes.push_back(ProbeCapture{.probe = static_cast<uint32_t>(plan.probes.size()), .path = lib,
                                         .file_offset = *off, .is_return = ret, .label = f.name()});
  }
  if (plan.probes.empty()) return err("bench: ", lib, ": no functions to probe");
  return plan;
}

Result<AttachBenchRow> measure(const CapturePlan& plan, BpfAttach how, int runs) {
  AttachBenchRow row;
  row.probes = plan.probes.size();
  std::vector<double> attach, detach;
  // Every process: no map of followed processes to fill; no process maps the copy.
  const CaptureTarget target{.pid = -1, .system_wide = true, .start_on_exec = false, .ring_pages = 16};
  for (int r = 0; r < runs; r++) {
    auto t0 = std::chrono::steady_clock::now();
    UPROF_ASSIGN(auto engine, open_bpf_engine(plan, target, BpfEngineOptions{.attach = how}));
    UPROF_TRY(engine->start());
    attach.push_back(seconds_since(t0));
    row.path = engine->attach_path();
    t0 = std::chrono::steady_clock::now();
    engine.reset();
    detach.push_back(seconds_since(t0));
  }
  row.attach_s = median(attach);
  row.detach_s = median(detach);
  return row;
}

}  // namespace

Result<AttachBench> bench_attach(const AttachBenchOptions& options) {
  UPROF_TRY(bpf_engine_supported());
  std::error_code ec;
  std::string dir = options.work_dir;
  const bool own_dir = dir.empty();
  if (own_dir) {
    std::string tmpl = (std::filesystem::temp_directory_path(ec) / "uprof-attach-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) return err("bench: creating a directory in ", tmpl, ": ", std::strerror(errno));
    dir = tmpl;
  }
  struct Cleanup {
    std::string dir;
    bool own;
    ~Cleanup() {
      std::error_code e;
      if (own) std::filesystem::remove_all(dir, e);
    }
  } cleanup{dir, own_dir};
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  const std::string copy = dir + "/libc-copy.so";
  if (!std::filesystem::copy_file(libc, copy, std::filesystem::copy_options::overwrite_existing, ec))
    return err("bench: copying ", libc, " to ", copy, ": ", ec.message());
  AttachBench out;
  if (uprobe_link_support().multi) {
    UPROF_ASSIGN(CapturePlan plan, plan_for(copy, options.link_functions));
    UPROF_ASSIGN(AttachBenchRow row, measure(plan, BpfAttach::Links, options.runs));
    out.rows.push_back(row);
  } else {
    out.skipped = "not measuring multi-uprobe links: this kernel has none (Linux 6.6+)";
  }
  UPROF_ASSIGN(CapturePlan plan, plan_for(copy, options.event_functions));
  UPROF_ASSIGN(AttachBenchRow row, measure(plan, BpfAttach::Events, options.runs));
  out.rows.push_back(row);
  return out;
}

std::string render_attach_bench(const AttachBench& b) {
  std::string s = "attach path                         probes   attach s   detach s   per probe: attach    detach\n";
  for (const auto& r : b.rows) {
    char line[256];
    const double n = static_cast<double>(std::max<std::size_t>(1, r.probes));
    std::snprintf(line, sizeof line, "%-34s %7zu %10.3f %10.3f %16.3f ms %7.3f ms\n", r.path.c_str(), r.probes,
                  r.attach_s, r.detach_s, r.attach_s * 1e3 / n, r.detach_s * 1e3 / n);
    s += line;
  }
  if (!b.skipped.empty()) s += "(" + b.skipped + ")\n";
  return s;
}

}  // namespace uprof
