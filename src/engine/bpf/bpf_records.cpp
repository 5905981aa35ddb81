#include "uprof/engine/bpf/bpf_records.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "uprof/engine/bpf/bpf_capture_abi.h"
#include "uprof/model/string_value.h"
#include "uprof/util/byte_reader.h"

namespace uprof {

namespace {

// A HIT_TEXT record's strings: slot i holds offset << 32 | bytes copied with the NUL,
// into the text after the values; they move to e.text (model/string_value.h).
Status take_strings(const ProbeCapture& probe, ByteReader& r, Event& e) {
  auto text = r.bytes(std::min<std::size_t>(r.remaining(), UPROF_BPF_TEXT_BYTES + UPROF_BPF_MAX_STRING));
  std::string_view all(reinterpret_cast<const char*>(text->data()), text->size());
  const auto raw = e.values;
  e.text.clear();
  for (unsigned i = 0; i < e.nvalues; i++) {
    if (!probe.values[i].is_string() || (e.missing >> i & 1)) continue;
    const uint64_t off = raw[i] >> 32, copied = raw[i] & 0xffffffff;
    if (copied == 0 || off > all.size() || copied > all.size() - off)
      return err("BPF record: probe ", probe.probe, " string ", i, " at ", off, "+", copied, ", past its ", all.size(),
                 " text bytes");
    const std::size_t len = copied - 1, max = probe.values[i].string_max;  // without the NUL
    put_string_value(e, i, all.substr(off, std::min(len, max)), len > max);
  }
  return ok();
}

}  // namespace

Event thread_lost_event(uint32_t pid, uint32_t tid, uint64_t time, uint64_t lost) {
  Event e;
  e.kind = EventKind::Lost;
  e.probe = UINT32_MAX;  // whichever of the thread's probes
  e.pid = pid;
  e.tid = tid;
  e.time = time;
  e.lost = lost;
  return e;
}

BpfRecordConverter::BpfRecordConverter(const CapturePlan& plan) : plan_(plan), recorded_(plan.probes.size(), 0) {}

// A STACK record: the thread's pt_regs in UPROF_BPF_REGS_BYTES, then `copied` stack bytes.
Status BpfRecordConverter::keep_stack(uint32_t tid, uint64_t time, uint32_t copied, std::span<const std::byte> rest) {
  if (rest.size() < UPROF_BPF_REGS_BYTES || copied > rest.size() - UPROF_BPF_REGS_BYTES)
    return err("BPF record: a stack of ", copied, " bytes after ", UPROF_BPF_REGS_BYTES, " register bytes, in ",
               rest.size(), " bytes");
  PendingStack& s = pending_stacks_[tid];
  s.time = time;
  const std::size_t regs = pt_regs_bytes(plan_.arch);
  s.regs.assign(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(regs, UPROF_BPF_REGS_BYTES)));
  const auto stack = rest.subspan(UPROF_BPF_REGS_BYTES, copied);
  s.bytes.assign(stack.begin(), stack.end());
  return ok();
}

Result<BpfEvent> BpfRecordConverter::convert(std::span<const std::byte> record) {
  BpfEvent out;
  UPROF_TRY(convert_into(record, out));
  return out;
}

Status BpfRecordConverter::convert_into(std::span<const std::byte> record, BpfEvent& out) {
  ByteReader r(record);
  auto h = r.read<uprof_bpf_record>();
  if (!h) return err("BPF record: ", record.size(), " bytes, shorter than its ", sizeof(uprof_bpf_record), "-byte header");
  if (h->nvalues > kMaxValues) return err("BPF record: ", unsigned{h->nvalues}, " values, more than ", kMaxValues);
  // A hit with strings carries every slot and room for the off-CPU totals, then its text.
  const uint8_t kind = h->kind & UPROF_BPF_KIND_MASK;
  const std::size_t slots = kind == UPROF_BPF_HIT_TEXT ? UPROF_BPF_TEXT_SLOTS : h->nvalues;
  auto values = r.bytes(slots * 8);
  if (!values)
    return err("BPF record: ", unsigned{h->nvalues}, " values need ", slots * 8,
               " bytes at byte ", r.offset(), ", the record has ", r.remaining());
  out.cpu = h->cpu;
  Event& e = out.event;
  // `out` is reused from record to record: what this record does not set is cleared.
  // The value slots past the record's own are cleared only as far as the previous one
  // filled them (clearing all 32 was a quarter of the drain's time).
  std::fill(e.values.begin() + std::min<std::size_t>(h->nvalues, e.nvalues), e.values.begin() + e.nvalues, 0);
  e.nvalues = 0;
  e.probe = 0;
  e.missing = 0;
  e.lost = 0;
  e.lost_until = 0;
  e.frame = 0;
  e.goroutine = 0;
  e.offcpu = {};
  if (!e.comm.empty()) e.comm.clear();
  if (!e.text.empty()) e.text.clear();
  if (!e.stack.empty()) e.stack.clear();
  e.pid = h->pid;
  e.tid = h->tid;
  e.time = h->time;
  out.lost_before.reset();
  out.none = false;
  out.stack = nullptr;
  if (h->kind & UPROF_BPF_LOST_BEFORE) {
    const uint32_t n = h->reserved >> 16;
    out.lost_before = thread_lost_event(h->pid, h->tid, h->time, n);
    lost_marked_ += n;
  }
  switch (kind) {
    case UPROF_BPF_HIT:
    case UPROF_BPF_HIT_TEXT: {
      if (h->probe >= plan_.probes.size())
        return err("BPF record: probe ", h->probe, ", beyond the plan's ", plan_.probes.size());
      const ProbeCapture& probe = plan_.probes[h->probe];
      if (h->nvalues != probe.values.size())
        return err("BPF record: probe ", h->probe, " has ", probe.values.size(), " values, the record ",
                   unsigned{h->nvalues});
      e.kind = EventKind::Sample;
      e.probe = h->probe;
      e.nvalues = h->nvalues;
      std::memcpy(e.values.data(), values->data(), values->size());
      for (std::size_t i = 0; i < e.nvalues; i++)
        if (probe.values[i].source == ValueSource::Constant) e.values[i] = static_cast<uint64_t>(probe.values[i].constant);
      e.missing = h->missing & (e.nvalues >= 32 ? ~0u : (1u << e.nvalues) - 1);
      // --off-cpu: the thread's totals, right after the record's values.
      if (probe.offcpu != OffCpuRole::None) {
        constexpr std::size_t kBytes = sizeof(e.offcpu);
        static_assert(kBytes == UPROF_BPF_OFFCPU_KINDS * 8);
        auto totals = kind == UPROF_BPF_HIT_TEXT ? std::optional(values->subspan(std::size_t{h->nvalues} * 8, kBytes))
                                                 : r.bytes(kBytes);
        if (!totals || totals->size() != kBytes)
          return err("BPF record: probe ", h->probe, "'s off-CPU totals need ", kBytes, " bytes at byte ", r.offset(),
                     ", the record has ", r.remaining());
        std::memcpy(e.offcpu.data(), totals->data(), kBytes);
      }
      if (kind == UPROF_BPF_HIT_TEXT) UPROF_TRY(take_strings(probe, r, e));
      if (probe.stack == StackCapture::Always || probe.stack == StackCapture::IfLong) {
        // Its STACK record came just before it (the same thread's records keep their order).
        auto it = pending_stacks_.find(h->tid);
        if (it != pending_stacks_.end() && it->second.time == h->time) {
          stack_ = user_stack_from_pt_regs(plan_.arch, it->second.regs, it->second.bytes);
          out.stack = &stack_;
        }
      }
      if (e.missing) missing_values_ += static_cast<unsigned>(std::popcount(e.missing));
      finish_sample(probe, e);
      recorded_[h->probe]++;
      samples_++;
      break;
    }
    case UPROF_BPF_STACK:
      UPROF_TRY(keep_stack(h->tid, h->time, h->missing, record.subspan(sizeof(uprof_bpf_record))));
      out.none = true;
      break;
    case UPROF_BPF_FORK:
      if (h->nvalues < 2) return err("BPF record: a fork without its parent");
      e.kind = EventKind::Fork;
      std::memcpy(e.values.data(), values->data(), 16);
      e.nvalues = 2;
      break;
    case UPROF_BPF_EXIT:
      e.kind = EventKind::Exit;
      break;
    case UPROF_BPF_COMM: {
      if (h->nvalues < 2) return err("BPF record: a comm without its name");
      const char* name = reinterpret_cast<const char*>(values->data());
      e.kind = EventKind::Comm;
      e.comm.assign(name, strnlen(name, 16));
      break;
    }
    default:
      return err("BPF record: unknown kind ", unsigned{kind});
  }
  return ok();
}

}  // namespace uprof
