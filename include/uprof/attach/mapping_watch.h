// record -g: the file mappings the recorded processes make, as the kernel reports them
// (PERF_RECORD_MMAP2 of a software dummy event per CPU, which never samples), so that a
// stack can be unwound after its process exited and took /proc/PID/maps with it. The
// perf engine has these records in its side band (EventSetOptions::track_mappings);
// the BPF engine opens this watch beside its programs.
//
//   MappingWatch::open({.pid = workload, .on_exec = true})   inherited by its children
//   ... each drain pass: watch.drain(fn)  ->  fn(4242, "7f1c2a028000-7f1c2a1bd000 r-xp 00028000 fe:01 1835023 /usr/lib/.../libc.so.6")
//
// What a ring loses is not retried: the unwinder reads /proc/PID/maps first anyway.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "uprof/attach/cpu_list.h"
#include "uprof/attach/ring_buffer.h"
#include "uprof/util/result.h"
#include "uprof/util/unique_fd.h"

namespace uprof {

struct MappingWatchOptions {
  pid_t pid = -1;        // the workload or -p PID, and the processes it starts; -1: every process (-a)
  bool on_exec = false;  // enabled at the workload's exec; else at enable()
  std::size_t ring_pages = 16;
  std::string online_cpus_path = kOnlineCpusPath;
};

class MappingWatch {
 public:
  using MappingFn = std::function<void(uint32_t pid, const std::string& maps_line)>;

  static Result<MappingWatch> open(const MappingWatchOptions& options);
  Status enable();
  // Reads what each ring holds: each file mapping to `fn`, as a /proc/PID/maps line.
  Status drain(const MappingFn& fn);

 private:
  MappingWatch() = default;
  std::vector<UniqueFd> fds_;
  std::vector<RingBuffer> rings_;
};

}  // namespace uprof
