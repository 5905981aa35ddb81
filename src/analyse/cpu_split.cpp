#include "uprof/analyse/cpu_split.h"

namespace uprof {

void CpuSplit::add(uint64_t duration, const OffCpuTimes& offcpu) {
  ++calls;
  unsigned __int128 sum = 0;
  for (uint64_t v : offcpu) sum += v;
  if (sum <= duration) {
    for (std::size_t k = 0; k < kOffCpuKinds; ++k) off[k] += offcpu[k];
    on_cpu_ns += duration - static_cast<uint64_t>(sum);
    return;
  }
  // More off-CPU time than the call lasted: every kind scaled to the duration, in
  // proportion; what rounding leaves goes to the largest kind so that they add up.
  uint64_t given = 0;
  std::size_t largest = 0;
  for (std::size_t k = 0; k < kOffCpuKinds; ++k) {
    const auto share = static_cast<uint64_t>(static_cast<unsigned __int128>(offcpu[k]) * duration / sum);
    off[k] += share;
    given += share;
    if (offcpu[k] > offcpu[largest]) largest = k;
  }
  off[largest] += duration - given;
}

void CpuSplit::merge(const CpuSplit& other) {
  calls += other.calls;
  on_cpu_ns += other.on_cpu_ns;
  for (std::size_t k = 0; k < kOffCpuKinds; ++k) off[k] += other.off[k];
}

uint64_t CpuSplit::off_cpu_ns() const {
  uint64_t s = 0;
  for (uint64_t v : off) s += v;
  return s;
}

double CpuSplit::on_cpu_fraction() const {
  const double all = static_cast<double>(on_cpu_ns) + static_cast<double>(off_cpu_ns());
  return all > 0 ? static_cast<double>(on_cpu_ns) / all : 0;
}

}  // namespace uprof
