#include "uprof/drain/drain_loop.h"

#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "uprof/util/unique_fd.h"

namespace uprof {
namespace {

// epoll tag of the workload's pidfd; rings are tagged with their index.
constexpr uint64_t kPidfdTag = ~uint64_t{0};

// Whether `pid` has exited, without reaping it (for kernels without pidfd_open).
bool exited_without_reaping(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    return errno == ECHILD;  // not our child, or already reaped: nothing left to wait for
  return info.si_pid == pid;
}

struct PassStats {
  DrainStats read;
  bool held = false;  // the consumer held the rings: nothing was read
};

// One pass over all rings, wrapped in the caller's pass hooks.
Result<PassStats> pass(std::span<RingBuffer> rings, const RingRecordFn& on_record,
                       const DrainLoopOptions& options) {
  if (options.on_pass_start) options.on_pass_start();
  PassStats s;
  s.held = options.hold_reads && options.hold_reads();
  if (!s.held) {
    UPROF_ASSIGN(s.read, drain_all(rings, on_record));
  }
  if (options.on_pass_end) UPROF_TRY(options.on_pass_end());
  return s;
}

void add(DrainLoopResult& r, const PassStats& s) {
  r.records += s.read.records;
  r.bytes += s.read.bytes;
  r.wrapped += s.read.wrapped;
  ++r.passes;
  if (s.held) ++r.held;
}

}  // namespace

Result<DrainStats> drain_all(std::span<RingBuffer> rings, const RingRecordFn& on_record) {
  DrainStats total;
  for (std::size_t i = 0; i < rings.size(); ++i) {
    UPROF_ASSIGN(DrainStats s, rings[i].drain([&](std::span<const std::byte> rec) {
      return on_record(i, rec);
    }));
    total.records += s.records;
    total.bytes += s.bytes;
    total.wrapped += s.wrapped;
  }
  return total;
}

Result<StopWaiter> StopWaiter::open(const StopCondition& stop, std::span<const int> fds) {
  UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
  if (!ep.valid()) return err("drain: epoll_create1: ", std::strerror(errno));
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (fds[i] < 0) continue;  // a ring without an event (tests): drained on each pass
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    if (::epoll_ctl(ep.get(), EPOLL_CTL_ADD, fds[i], &ev) != 0)
      return err("drain: epoll_ctl(ADD ring ", i, "): ", std::strerror(errno));
  }
  UniqueFd pidfd;
  if (stop.workload > 0) {
    pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, stop.workload, 0)));
    if (pidfd.valid()) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = kPidfdTag;
      if (::epoll_ctl(ep.get(), EPOLL_CTL_ADD, pidfd.get(), &ev) != 0)
        return err("drain: epoll_ctl(ADD pidfd): ", std::strerror(errno));
    }
    // Without a pidfd (Linux < 5.3) exits are polled with waitid(WNOWAIT) below.
  }
  return StopWaiter(stop, std::move(ep), std::move(pidfd), std::vector<int>(fds.begin(), fds.end()));
}

Result<std::optional<StopReason>> StopWaiter::wait(int poll_interval_ms, bool& ready) {
  ready = false;
  if (stop_->flag && stop_->flag->load(std::memory_order_relaxed)) return std::optional(StopReason::Flag);
  if (workload_exited_) {
    if (!stop_->descendants_running || !stop_->descendants_running())
      return std::optional(StopReason::WorkloadExited);
    if (pidfd_.valid()) {  // readable from now on: it would wake every wait
      ::epoll_ctl(ep_.get(), EPOLL_CTL_DEL, pidfd_.get(), nullptr);
      pidfd_.reset();
    }
  }
  int timeout = poll_interval_ms;
  if (stop_->deadline) {
    // Rounded up: waking a little early would only spin once more.
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*stop_->deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::optional(StopReason::Deadline);
    timeout = static_cast<int>(std::min<int64_t>(timeout, left.count()));
  }
  epoll_event events[16];
  int n = ::epoll_wait(ep_.get(), events, 16, timeout);
  if (n < 0 && errno != EINTR) return err("drain: epoll_wait: ", std::strerror(errno));
  for (int k = 0; k < n; ++k) {
    if (events[k].data.u64 == kPidfdTag) {
      workload_exited_ = true;
      continue;
    }
    ready = true;
    // A ring reports HUP once the events writing to it are gone (their task
    // exited); it would stay ready forever, so stop watching it. The passes
    // after the wait still drain it.
    if (events[k].events & (EPOLLHUP | EPOLLERR)) {
      std::size_t i = static_cast<std::size_t>(events[k].data.u64);
      ::epoll_ctl(ep_.get(), EPOLL_CTL_DEL, fds_[i], nullptr);
    }
  }
  if (!pidfd_.valid() && !workload_exited_ && stop_->workload > 0 && exited_without_reaping(stop_->workload))
    workload_exited_ = true;
  return std::optional<StopReason>{};
}

Result<DrainLoopResult> run_drain_loop(std::span<RingBuffer> rings, const StopCondition& stop,
                                       const RingRecordFn& on_record,
                                       const std::function<Status()>& disable_events,
                                       const DrainLoopOptions& options) {
  std::vector<int> fds;
  for (auto& r : rings) fds.push_back(r.fd());
  UPROF_ASSIGN(StopWaiter waiter, StopWaiter::open(stop, fds));
  DrainLoopResult result;
  for (;;) {
    bool ring_ready = false;
    UPROF_ASSIGN(std::optional<StopReason> reason, waiter.wait(options.poll_interval_ms, ring_ready));
    if (reason) {
      result.reason = *reason;
      break;
    }
    if (ring_ready) ++result.wakeups;
    UPROF_ASSIGN(PassStats s, pass(rings, on_record, options));
    add(result, s);
  }

  if (disable_events) UPROF_TRY(disable_events());
  // After the disable nothing new arrives; one pass would do, but keep going
  // until a pass finds every ring empty rather than rely on that.
  for (;;) {
    UPROF_ASSIGN(PassStats s, pass(rings, on_record, options));
    add(result, s);
    if (s.read.records == 0 && !s.held) break;
  }
  return result;
}

}  // namespace uprof
