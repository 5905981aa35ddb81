// The why_slow fixture (tests/fixtures/why_slow.c) recorded in the arm64 guest with -g
// (and --off-cpu), checked call by call on the host (scripts/arm64/check_data.cpp):
//
//   why_slow N US: each round calls spinner() then sleeper(), each of which calls work()
//   once, so a thread's k-th call of work (from 0) is spinner's when k is even, sleeper's
//   when it is odd.
//
// - Stacks: the side named by `stacks_at` (entry: record -g; return: -g --stack-min below
//   US, which every call outlasts) carries a stack on every call, the other side none;
//   frame 0 (the call site in work's caller) is in spinner or sleeper as the call's
//   number says, and a later frame is in main.
// - Off-CPU (probes that carry it): sleeper's calls at least 80% off the CPU, blocked only
//   asleep, asleep at least 90% of N * US (a timer never fires early); spinner's calls
//   blocked at most a fifth of their time (it never blocks: a busy guest may preempt it,
//   which is runnable time).
// - A probe on another function (libc's clock_nanosleep, which sleeper's work calls): at
//   its entry its stack runs through work, sleeper and main; work's calls are checked
//   as above.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "elf_functions.h"
#include "uprof/model/recording.h"

class WhySlowCheck {
 public:
  // root: the host's copy of the guest's files; stacks_at: "entry", "return" or "none".
  WhySlowCheck(std::string root, std::string stacks_at, uint64_t us)
      : root_(std::move(root)), stacks_at_(std::move(stacks_at)), us_(us) {}

  // Every event in file order, with its probe (nullptr for events of no probe).
  void on_event(const uprof::Event& e, const uprof::ProbeInfo* probe, bool entry_side);
  // Problems found (the first few are enough), and a summary of what was seen.
  std::vector<std::string> finish();
  std::string summary() const { return summary_; }

 private:
  struct Open {
    uint64_t time;
    uprof::OffCpuTimes offcpu;
    uint64_t k;
  };
  struct Thread {
    std::vector<Open> open;
    uint64_t calls = 0;
  };
  struct Share {
    uint64_t calls = 0, wall = 0, stacks = 0;
    uprof::OffCpuTimes off{};
  };
  void check_stack(const uprof::Event& e, uint64_t k);
  void check_inner_stack(const uprof::Event& e);
  std::vector<std::string> frame_names(const uprof::Event& e);
  template <class... Parts>
  void fail(Parts&&... parts);

  std::string root_, stacks_at_;
  uint64_t us_;
  ElfFunctions names_;
  std::map<uint32_t, std::string> objects_;
  std::map<uint32_t, Thread> threads_;
  Share by_caller_[2];  // spinner, sleeper
  bool offcpu_ = false;
  std::vector<std::string> problems_;
  std::string summary_, example_[2];
  uint64_t inner_ = 0;  // samples of the probe inside work
  std::string inner_example_;
};
