#include "uprof/engine/perf/perf_records.h"


#include "uprof/drain/sample_values.h"

#include <algorithm>
#include <bit>

namespace uprof {

PerfRecordConverter::PerfRecordConverter(const CapturePlan& plan, uint64_t start_time)
    : plan_(plan),
      arch_(arch_info(plan.arch)),
      recorded_(plan.probes.size()),
      lost_records_(plan.probes.size()),
      start_time_(start_time),
      last_time_(start_time),
      raw_layouts_(plan.probes.size()) {}

void PerfRecordConverter::set_raw_layout(uint32_t probe, std::vector<RawSlot> layout) {
  if (probe < raw_layouts_.size()) raw_layouts_[probe] = std::move(layout);
}

void PerfRecordConverter::add_id(uint64_t id, std::optional<uint32_t> probe, const perf_event_attr& attr) {
  ids_[id] = IdInfo{probe.value_or(kNoProbe), sample_format(attr, arch_)};
}

uint64_t& PerfRecordConverter::ring_time(std::size_t ring) {
  if (ring >= ring_times_.size()) ring_times_.resize(ring + 1, start_time_);
  return ring_times_[ring];
}

Result<std::optional<Event>> PerfRecordConverter::convert(std::span<const std::byte> rec, std::size_t ring) {
  using Out = std::optional<Event>;
  UPROF_ASSIGN(perf_event_header h, decode_header(rec));
  has_stack_ = false;
  has_mapping_ = false;
  if (h.type != PERF_RECORD_SAMPLE && h.type != PERF_RECORD_LOST && h.type != PERF_RECORD_COMM &&
      h.type != PERF_RECORD_FORK && h.type != PERF_RECORD_EXIT && h.type != PERF_RECORD_MMAP2)
    return Out{};
  UPROF_ASSIGN(std::optional<uint64_t> id, record_identifier(rec));
  if (!id) return Out{};
  // Mappings are kept only from the side band that asked for them (record -g).
  if (h.type == PERF_RECORD_MMAP2 && !ids_.count(*id)) return Out{};
  auto it = ids_.find(*id);
  if (it == ids_.end()) return err("record: a ", record_type_name(h.type), " of unknown event id ", *id);
  const IdInfo& info = it->second;
  if (info.probe != kNoProbe && info.probe >= plan_.probes.size())
    return err("record: event id ", *id, " samples probe ", info.probe, ", beyond the plan's ", plan_.probes.size());

  if (h.type == PERF_RECORD_MMAP2) {
    UPROF_ASSIGN(MmapRecord m, decode_mmap2(rec, info.format));
    auto line = proc_maps_line(m);
    if (!line) return Out{};
    mapping_ = Mapping{.pid = m.pid, .time = m.sample_id ? m.sample_id->time : last_time_,
                       .maps_line = std::move(*line)};
    has_mapping_ = true;
    if (m.sample_id) ring_time(ring) = m.sample_id->time;
    return Out{};
  }
  Event e;
  if (h.type == PERF_RECORD_COMM) {
    UPROF_ASSIGN(CommRecord c, decode_comm(rec, info.format));
    e.kind = EventKind::Comm;
    e.pid = c.pid;
    e.tid = c.tid;
    e.comm = std::move(c.comm);
    e.time = c.sample_id ? c.sample_id->time : last_time_;
    if (c.sample_id) ring_time(ring) = e.time;
  } else if (h.type == PERF_RECORD_FORK || h.type == PERF_RECORD_EXIT) {
    UPROF_ASSIGN(TaskRecord t, decode_task(rec, info.format));
    e.kind = t.exit ? EventKind::Exit : EventKind::Fork;
    e.pid = t.pid;
    e.tid = t.tid;
    e.time = t.time;
    ring_time(ring) = e.time;
    if (!t.exit) {
      e.values[0] = t.ppid;
      e.values[1] = t.ptid;
      e.nvalues = 2;
    }
  } else if (h.type == PERF_RECORD_SAMPLE) {
    if (info.probe == kNoProbe) return Out{};  // the side band does not sample
    UPROF_ASSIGN(Sample s, decode_sample(rec, info.format));
    e.kind = EventKind::Sample;
    e.probe = info.probe;
    e.pid = s.pid;
    e.tid = s.tid;
    e.time = s.time;
    extract_values(s, plan_.probes[info.probe].values, arch_.sp_reg, e);
    if (!raw_layouts_[info.probe].empty()) apply_raw(raw_layouts_[info.probe], s.raw, e);
    missing_values_ += static_cast<unsigned>(std::popcount(e.missing));
    finish_sample(plan_.probes[info.probe], e);
    if (const StackCapture how = plan_.probes[info.probe].stack;
        (how == StackCapture::Always || how == StackCapture::IfLong) && s.regs_abi != 0) {
      stack_ = UserStack{.arch = plan_.arch, .bytes = s.valid_stack()};
      for (unsigned i = 0; i < 64; i++)
        if (auto v = s.reg(i)) {
          stack_.regs[i] = *v;
          stack_.mask |= uint64_t{1} << i;
        }
      has_stack_ = true;
    }
    recorded_[info.probe]++;
    samples_++;
    last_time_ = s.time;
    ring_time(ring) = s.time;
  } else {
    // The kernel writes LOST just before the first record that fits again: the drops
    // came after the ring's record before it, and before this one. Any thread that ran
    // on the ring's CPU meanwhile may have lost events (tid 0: every thread).
    UPROF_ASSIGN(LostRecord l, decode_lost(rec, info.format));
    e.kind = EventKind::Lost;
    e.probe = info.probe;  // UINT32_MAX for the side band's: no probe lost a sample
    e.lost = l.lost;
    e.time = ring_time(ring);
    e.lost_until = std::max(e.time, l.sample_id ? l.sample_id->time : last_time_);
    if (info.probe != kNoProbe) lost_records_[info.probe] += l.lost;
  }
  return Out{std::move(e)};
}

std::optional<Event> unreported_loss(uint64_t counted, uint64_t reported, uint64_t time) {
  if (counted <= reported) return std::nullopt;
  Event e;
  e.kind = EventKind::Lost;
  e.probe = UINT32_MAX;
  e.lost = counted - reported;
  e.time = e.lost_until = time;
  return e;
}

}  // namespace uprof
