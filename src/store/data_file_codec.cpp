// Encoders and decoders of the data file's section payloads: META, PROBES and TRAILER
// whole, EVENTS one event at a time (the writer cuts blocks, the reader finds them).
#include <algorithm>
#include <charconv>
#include <climits>
#include <optional>

#include "uprof/store/data_file.h"
#include "uprof/store/varint.h"

namespace uprof {
namespace {

// Flags above the probe kind in its byte (format 1.2).
constexpr uint8_t kFrameFlag = 0x80;
constexpr uint8_t kTailCallFlag = 0x40;
constexpr uint8_t kUsdtFlag = 0x20;  // 1.4: a USDT probe; its pair key follows offset_in_function
constexpr uint8_t kSiteFlag = 0x10;  // 1.5: a source line or an inlined copy (ProbeInfo::site)
constexpr uint8_t kGoroutineFlag = 0x08;  // 1.8: its samples carry Go's g (ProbeInfo::goroutine)
constexpr uint8_t kKindFlags = kFrameFlag | kTailCallFlag | kUsdtFlag | kSiteFlag | kGoroutineFlag;
// 1.9: a byte of what each hit carries besides its values, after the probe's row.
constexpr uint8_t kStackCapture = 0x01;   // its call stack (ProbeInfo::stack)
constexpr uint8_t kOffCpuCapture = 0x02;  // its thread's off-CPU totals (ProbeInfo::offcpu)
// The most frames a stored stack may have (perf's sysctl_perf_event_max_stack is 127).
constexpr uint64_t kMaxStoredFrames = 1024;

Error bad(const char* section, const ByteReader& r, const char* what) {
  return err(section, " at payload byte ", r.offset(), ": ", what);
}

uint64_t to_u64(const std::string& s) {
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// "1556 1556 15968": one number per probe, space-separated.
std::optional<std::vector<uint64_t>> parse_cost_list(const std::string& s) {
  std::vector<uint64_t> out;
  const char* p = s.data();
  const char* end = p + s.size();
  while (p < end) {
    uint64_t v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || (next < end && *next != ' ')) return std::nullopt;
    out.push_back(v);
    p = next < end ? next + 1 : next;
  }
  return out;
}

}  // namespace

std::string encode_meta(const RecordingMeta& m) {
  std::vector<std::pair<std::string, std::string>> kv;
  for (const auto& a : m.command) kv.emplace_back("argv", a);
  kv.emplace_back("kernel", m.kernel);
  kv.emplace_back("hostname", m.hostname);
  kv.emplace_back("uprof_version", m.uprof_version);
  if (!m.engine.empty()) kv.emplace_back("engine", m.engine);
  if (!m.attach.empty()) kv.emplace_back("attach", m.attach);
  kv.emplace_back("start_realtime_ns", std::to_string(m.start_realtime_ns));
  kv.emplace_back("start_monotonic_ns", std::to_string(m.start_monotonic_ns));
  kv.emplace_back("probe_cost_ns", std::to_string(m.probe_cost_ns));
  auto put_list = [&](const char* key, const std::vector<uint64_t>& costs) {
    if (costs.empty()) return;
    std::string list;
    for (uint64_t c : costs) list += (list.empty() ? "" : " ") + std::to_string(c);
    kv.emplace_back(key, list);
  };
  put_list("probe_costs_ns", m.probe_costs_ns);
  put_list("probe_hit_costs_ns", m.probe_hit_costs_ns);
  std::string out;
  put_varint(out, kv.size());
  for (auto& [k, v] : kv) {
    put_string(out, k);
    put_string(out, v);
  }
  return out;
}

Result<RecordingMeta> decode_meta(ByteReader& r, Arch arch) {
  RecordingMeta m;
  m.arch = arch;
  auto n = get_varint(r);
  if (!n || *n > r.remaining()) return bad("META", r, "bad field count");
  for (uint64_t i = 0; i < *n; i++) {
    auto k = get_string(r), v = get_string(r);
    if (!k || !v) return bad("META", r, "truncated field");
    if (*k == "argv") m.command.push_back(*v);
    else if (*k == "kernel") m.kernel = *v;
    else if (*k == "hostname") m.hostname = *v;
    else if (*k == "uprof_version") m.uprof_version = *v;
    else if (*k == "engine") m.engine = *v;
    else if (*k == "attach") m.attach = *v;
    else if (*k == "start_realtime_ns") m.start_realtime_ns = to_u64(*v);
    else if (*k == "start_monotonic_ns") m.start_monotonic_ns = to_u64(*v);
    else if (*k == "probe_cost_ns") m.probe_cost_ns = to_u64(*v);
    else if (*k == "probe_costs_ns" || *k == "probe_hit_costs_ns") {
      auto costs = parse_cost_list(*v);
      const bool inside = *k == "probe_costs_ns";
      if (!costs)
        return bad("META", r, inside ? "probe_costs_ns is not a list of numbers"
                                     : "probe_hit_costs_ns is not a list of numbers");
      (inside ? m.probe_costs_ns : m.probe_hit_costs_ns) = std::move(*costs);
    }
  }
  return m;
}

namespace {

// The typed part of a value spec (flag 4), format 1.1:
//   u8 kind, string type, u8 flags (1 deref, 2 continues), z deref_offset, z constant,
//   string reason, v total_size, v nenum x (z value, string name),
//   v nmembers x (string name, v offset, u8 size, u8 kind, u8 signed)
void encode_typed(std::string& out, const ValueSpec& v) {
  out.push_back(static_cast<char>(v.kind));
  put_string(out, v.type);
  out.push_back(static_cast<char>((v.deref ? 1 : 0) | (v.continues ? 2 : 0)));
  put_varint(out, zigzag(v.deref_offset));
  put_varint(out, zigzag(v.constant));
  put_string(out, v.reason);
  put_varint(out, v.total_size);
  put_varint(out, v.enumerators.size());
  for (const auto& [value, name] : v.enumerators) {
    put_varint(out, zigzag(value));
    put_string(out, name);
  }
  put_varint(out, v.members.size());
  for (const auto& m : v.members) {
    put_string(out, m.name);
    put_varint(out, m.offset);
    out.push_back(static_cast<char>(m.size));
    out.push_back(static_cast<char>(m.kind));
    out.push_back(static_cast<char>(m.is_signed ? 1 : 0));
  }
}

Status decode_typed(ByteReader& r, ValueSpec& v) {
  auto kind = r.read<uint8_t>();
  auto type = get_string(r, 4096);
  auto flags = r.read<uint8_t>();
  auto doff = get_varint(r), cst = get_varint(r);
  auto reason = get_string(r, 4096);
  auto total = get_varint(r);
  auto nenum = get_varint(r);
  if (!kind || !type || !flags || !doff || !cst || !reason || !total || !nenum)
    return bad("PROBES", r, "truncated typed value");
  if (*kind > static_cast<uint8_t>(ValueKind::String)) return bad("PROBES", r, "bad value kind");
  // Each enumerator takes at least 2 bytes: a count beyond that cannot be real.
  if (*nenum > r.remaining() / 2) return bad("PROBES", r, "bad enumerator count");
  v.kind = static_cast<ValueKind>(*kind);
  v.type = std::move(*type);
  v.deref = (*flags & 1) != 0;
  v.continues = (*flags & 2) != 0;
  v.deref_offset = static_cast<int32_t>(unzigzag(*doff));
  v.constant = unzigzag(*cst);
  v.reason = std::move(*reason);
  v.total_size = static_cast<uint32_t>(std::min<uint64_t>(*total, UINT32_MAX));
  for (uint64_t i = 0; i < *nenum; i++) {
    auto value = get_varint(r);
    auto name = get_string(r, 4096);
    if (!value || !name) return bad("PROBES", r, "truncated enumerator");
    v.enumerators.emplace_back(unzigzag(*value), std::move(*name));
  }
  auto nmem = get_varint(r);
  if (!nmem || *nmem > r.remaining() / 5) return bad("PROBES", r, "bad member count");
  for (uint64_t i = 0; i < *nmem; i++) {
    StructMember m;
    auto name = get_string(r, 4096);
    auto off = get_varint(r);
    auto size = r.read<uint8_t>(), mkind = r.read<uint8_t>(), sign = r.read<uint8_t>();
    if (!name || !off || !size || !mkind || !sign) return bad("PROBES", r, "truncated struct member");
    if (*mkind > static_cast<uint8_t>(ValueKind::Float) || *size == 0 || *size > 8 || *off > UINT32_MAX)
      return bad("PROBES", r, "bad struct member");
    m.name = std::move(*name);
    m.offset = static_cast<uint32_t>(*off);
    m.size = *size;
    m.kind = static_cast<ValueKind>(*mkind);
    m.is_signed = *sign != 0;
    v.members.push_back(std::move(m));
  }
  return ok();
}

// How a value reads memory (flag 8), format 1.3; raw values have no typed part, so
// this stands on its own:  u8 flags (1 deref, 2 string), z deref_offset,
// v nhops x z hop, v string_max.     "+0(+8(%di)):string" -> 03 00 01 10 40
void encode_memory(std::string& out, const ValueSpec& v) {
  out.push_back(static_cast<char>((v.deref ? 1 : 0) | (v.is_string() ? 2 : 0)));
  put_varint(out, zigzag(v.deref_offset));
  put_varint(out, v.hops.size());
  for (int32_t h : v.hops) put_varint(out, zigzag(h));
  put_varint(out, v.string_max);
}

Status decode_memory(ByteReader& r, ValueSpec& v) {
  auto flags = r.read<uint8_t>();
  auto doff = get_varint(r), nhops = get_varint(r);
  if (!flags || !doff || !nhops) return bad("PROBES", r, "truncated memory read");
  if (*nhops > 8) return bad("PROBES", r, "bad memory read count");
  v.deref = (*flags & 1) != 0;
  v.deref_offset = static_cast<int32_t>(unzigzag(*doff));
  v.hops.clear();
  for (uint64_t i = 0; i < *nhops; i++) {
    auto h = get_varint(r);
    if (!h) return bad("PROBES", r, "truncated memory read");
    v.hops.push_back(static_cast<int32_t>(unzigzag(*h)));
  }
  auto max = get_varint(r);
  if (!max || *max > 65535) return bad("PROBES", r, "bad string size");
  v.string_max = static_cast<uint16_t>(*max);
  if (*flags & 2) {
    v.kind = ValueKind::String;
    if (v.type.empty()) v.type = "string";
  }
  return ok();
}

// Where the probe counts (1.6): u8 role, string row. "add" at its entry -> 01 03 'add'.
Status decode_row(ByteReader& r, ProbeInfo& p) {
  auto role = r.read<uint8_t>();
  auto row = get_string(r, 64 << 10);
  if (!role || !row) return bad("PROBES", r, "truncated probe role");
  if (*role > kLastRowRole) return bad("PROBES", r, "bad probe role");
  p.role = static_cast<RowRole>(*role);
  p.row = std::move(*row);
  return ok();
}

}  // namespace

std::string encode_probes(const std::vector<ProbeInfo>& probes) {
  std::string out;
  put_varint(out, probes.size());
  for (const auto& p : probes) {
    put_varint(out, p.index);
    out.push_back(static_cast<char>(static_cast<uint8_t>(p.kind) | (p.frame ? kFrameFlag : 0) |
                                    (p.tail_call ? kTailCallFlag : 0) | (p.usdt ? kUsdtFlag : 0) |
                                    (p.site ? kSiteFlag : 0) | (p.goroutine ? kGoroutineFlag : 0)));
    put_string(out, p.spec);
    put_string(out, p.path);
    put_string(out, p.build_id);
    put_string(out, p.function);
    put_string(out, p.symbol);
    put_varint(out, p.file_offset);
    put_varint(out, p.vaddr);
    put_varint(out, p.offset_in_function);
    if (p.usdt) put_varint(out, p.pair_key);
    out.push_back(static_cast<char>(p.role));  // 1.6
    put_string(out, p.row);
    out.push_back(static_cast<char>((p.stack ? kStackCapture : 0) | (p.offcpu ? kOffCpuCapture : 0)));  // 1.9
    put_varint(out, p.values.size());
    for (const auto& v : p.values) {
      put_string(out, v.name);
      out.push_back(static_cast<char>(v.source));
      put_varint(out, v.reg);
      put_varint(out, zigzag(v.stack_offset));
      out.push_back(static_cast<char>(v.size));
      const bool typed = v.typed();
      const bool memory = v.reads_memory() || v.is_string();
      out.push_back(static_cast<char>((v.is_signed ? 1 : 0) | (v.hex ? 2 : 0) | (typed ? 4 : 0) | (memory ? 8 : 0)));
      if (typed) encode_typed(out, v);
      if (memory) encode_memory(out, v);
    }
  }
  return out;
}

Result<std::vector<ProbeInfo>> decode_probes(ByteReader& r, uint16_t minor) {
  auto n = get_varint(r);
  if (!n || *n > r.remaining()) return bad("PROBES", r, "bad probe count");
  std::vector<ProbeInfo> out;
  for (uint64_t i = 0; i < *n; i++) {
    ProbeInfo p;
    auto idx = get_varint(r);
    auto kind = r.read<uint8_t>();
    if (!idx || *idx != i) return bad("PROBES", r, "probe index out of order");
    if (!kind || (*kind & ~kKindFlags) > 2) return bad("PROBES", r, "bad probe kind");
    p.index = static_cast<uint32_t>(i);
    p.kind = static_cast<ProbeKind>(*kind & ~kKindFlags);
    p.frame = *kind & kFrameFlag;
    p.tail_call = *kind & kTailCallFlag;
    p.usdt = *kind & kUsdtFlag;
    p.site = *kind & kSiteFlag;
    p.goroutine = *kind & kGoroutineFlag;
    for (std::string* s : {&p.spec, &p.path, &p.build_id, &p.function, &p.symbol}) {
      auto v = get_string(r, 64 << 10);
      if (!v) return bad("PROBES", r, "truncated string");
      *s = std::move(*v);
    }
    auto fo = get_varint(r), va = get_varint(r), oif = get_varint(r);
    std::optional<uint64_t> key = 0;
    if (p.usdt) key = get_varint(r);
    if (!fo || !va || !oif || !key) return bad("PROBES", r, "truncated probe");
    if (minor >= 6) UPROF_TRY(decode_row(r, p));
    if (minor >= 9) {
      auto capture = r.read<uint8_t>();
      if (!capture) return bad("PROBES", r, "truncated probe");
      p.stack = *capture & kStackCapture;
      p.offcpu = *capture & kOffCpuCapture;
    }
    auto nv = get_varint(r);
    if (!nv) return bad("PROBES", r, "truncated probe");
    if (*key > UINT32_MAX) return bad("PROBES", r, "bad pair key");
    p.pair_key = static_cast<uint32_t>(*key);
    if (*nv > kMaxValues) return bad("PROBES", r, "too many values for one probe");
    p.file_offset = *fo;
    p.vaddr = *va;
    p.offset_in_function = *oif;
    for (uint64_t j = 0; j < *nv; j++) {
      ValueSpec v;
      auto name = get_string(r, 4096);
      auto src = r.read<uint8_t>();
      auto reg = get_varint(r);
      auto so = get_varint(r);
      auto size = r.read<uint8_t>();
      auto sign = r.read<uint8_t>();
      if (!name || !src || !reg || !so || !size || !sign) return bad("PROBES", r, "truncated value spec");
      if (*src < 1 || *src > static_cast<uint8_t>(ValueSource::Comm)) return bad("PROBES", r, "bad value source");
      if (*size == 0 || *size > 8) return bad("PROBES", r, "bad value size");
      v.name = std::move(*name);
      v.source = static_cast<ValueSource>(*src);
      v.reg = static_cast<uint16_t>(*reg);
      v.stack_offset = static_cast<int32_t>(unzigzag(*so));
      v.size = *size;
      v.is_signed = (*sign & 1) != 0;
      v.hex = (*sign & 2) != 0;
      if (*sign & 4) UPROF_TRY(decode_typed(r, v));
      if (*sign & 8) UPROF_TRY(decode_memory(r, v));
      p.values.push_back(std::move(v));
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::string encode_trailer(const Trailer& t) {
  std::string out;
  put_varint(out, t.end_monotonic_ns);
  put_varint(out, t.events);
  put_varint(out, t.lost);
  put_varint(out, zigzag(t.exit_status));
  put_varint(out, t.counts.size());
  for (const auto& c : t.counts) {
    put_varint(out, c.recorded);
    put_varint(out, c.kernel);
  }
  return out;
}

Result<Trailer> decode_trailer(ByteReader& r) {
  Trailer t;
  auto end = get_varint(r), ev = get_varint(r), lost = get_varint(r), st = get_varint(r), n = get_varint(r);
  if (!end || !ev || !lost || !st || !n) return bad("TRAILER", r, "truncated");
  if (*n > r.remaining()) return bad("TRAILER", r, "bad probe count");
  t.end_monotonic_ns = *end;
  t.events = *ev;
  t.lost = *lost;
  t.exit_status = static_cast<int32_t>(unzigzag(*st));
  for (uint64_t i = 0; i < *n; i++) {
    auto rec = get_varint(r), k = get_varint(r);
    if (!rec || !k) return bad("TRAILER", r, "truncated counts");
    t.counts.push_back({*rec, *k});
  }
  return t;
}

EventCodecState event_codec_state(const std::vector<ProbeInfo>& probes, uint64_t base_time) {
  EventCodecState s{.time = base_time, .nvalues = {}};
  for (const auto& p : probes) {
    s.nvalues.push_back(static_cast<uint8_t>(p.values.size()));
    s.frame.push_back(p.frame);
    s.goroutine.push_back(p.goroutine);
    s.stack.push_back(p.stack);
    s.offcpu.push_back(p.offcpu);
    uint32_t strings = 0;
    for (std::size_t i = 0; i < p.values.size() && i < 32; i++)
      if (p.values[i].is_string()) strings |= uint32_t{1} << i;
    s.strings.push_back(strings);
  }
  return s;
}

// A sample of probe 0 with values (7, -1), 100 ns after the event before, pid 40 tid 41:
//   01 c8 01 00 29 01 0e 01    kind, z dt, v probe, v tid, z (pid - tid), z values
void encode_event(const Event& e, EventCodecState& state, ByteBuffer& out) {
  const bool partial = e.kind == EventKind::Sample && e.missing;
  // A Lost that older readers would misread (one thread's, or a gap) has a kind of its own.
  const bool scoped_lost = e.kind == EventKind::Lost && (e.tid || e.lost_until > e.time);
  out.push_back(static_cast<char>(partial       ? kPartialSampleKind
                                  : scoped_lost ? kScopedLostKind
                                                : static_cast<uint8_t>(e.kind)));
  put_varint(out, zigzag(static_cast<int64_t>(e.time - state.time)));
  state.time = e.time;
  switch (e.kind) {
    case EventKind::Sample: {
      put_varint(out, e.probe);
      put_varint(out, e.tid);
      put_varint(out, zigzag(static_cast<int64_t>(e.pid) - static_cast<int64_t>(e.tid)));
      if (partial) put_varint(out, e.missing);
      // As many values as the probe has, whatever the event holds (missing ones as 0).
      uint8_t n = e.probe < state.nvalues.size() ? state.nvalues[e.probe] : 0;
      const uint32_t strings = e.probe < state.strings.size() ? state.strings[e.probe] : 0;
      for (uint8_t i = 0; i < n; i++) {
        if (strings >> i & 1) {
          // A string slot: v (length << 1 | cut), then its bytes (1.3).
          StringBytes sb = i < e.nvalues && !(e.missing >> i & 1) ? string_value(e, i) : StringBytes{};
          put_varint(out, uint64_t{sb.bytes.size()} << 1 | (sb.cut ? 1 : 0));
          out.append(sb.bytes);
          continue;
        }
        put_varint(out, zigzag(static_cast<int64_t>(i < e.nvalues ? e.values[i] : 0)));
      }
      if (e.probe < state.frame.size() && state.frame[e.probe]) put_varint(out, e.frame);
      if (e.probe < state.goroutine.size() && state.goroutine[e.probe]) put_varint(out, e.goroutine);
      if (e.probe < state.stack.size() && state.stack[e.probe]) {
        // 1.9: v frames, then per frame v object, v offset.
        const std::size_t nframes = std::min<std::size_t>(e.stack.size(), kMaxStoredFrames);
        put_varint(out, nframes);
        for (std::size_t i = 0; i < nframes; i++) {
          put_varint(out, e.stack[i].object);
          put_varint(out, e.stack[i].offset);
        }
      }
      if (e.probe < state.offcpu.size() && state.offcpu[e.probe]) {
        // 1.9: v kinds, then a total per kind (a later build's extra kinds are skipped).
        put_varint(out, kOffCpuKinds);
        for (uint64_t t : e.offcpu) put_varint(out, t);
      }
      break;
    }
    case EventKind::Lost:
      put_varint(out, e.probe == UINT32_MAX ? 0 : uint64_t{e.probe} + 1);
      put_varint(out, e.lost);
      if (scoped_lost) {
        put_varint(out, e.tid);
        put_varint(out, zigzag(static_cast<int64_t>(e.pid) - static_cast<int64_t>(e.tid)));
        put_varint(out, e.lost_until > e.time ? e.lost_until - e.time : 0);
      }
      break;
    case EventKind::Comm:
      put_varint(out, e.pid);
      put_varint(out, e.tid);
      put_string(out, e.comm);
      break;
    case EventKind::Exit:
      put_varint(out, e.pid);
      put_varint(out, e.tid);
      break;
    case EventKind::Fork:
      put_varint(out, e.pid);
      put_varint(out, e.tid);
      put_varint(out, e.values[0]);
      put_varint(out, e.values[1]);
      break;
    case EventKind::Object:
      put_varint(out, e.object);
      put_string(out, e.path);
      put_string(out, e.build_id);
      break;
  }
}

void encode_event(const Event& e, EventCodecState& state, std::string& out) {
  ByteBuffer b;
  encode_event(e, state, b);
  out += b.view();
}

namespace {

// The fields of a sample (kind 1, or 6 with its missing mask) after its time delta.
Status decode_sample(ByteReader& r, uint8_t kind, EventCodecState& state, Event& e) {
  auto probe = get_varint(r), tid = get_varint(r), dp = get_varint(r);
  if (!probe || !tid || !dp) return bad("EVENTS", r, "truncated sample");
  if (kind == kPartialSampleKind) {
    auto m = get_varint(r);
    if (!m) return bad("EVENTS", r, "truncated sample");
    e.missing = static_cast<uint32_t>(*m);
  }
  if (*probe >= state.nvalues.size()) return bad("EVENTS", r, "sample of an unknown probe");
  e.kind = EventKind::Sample;
  e.probe = static_cast<uint32_t>(*probe);
  e.tid = static_cast<uint32_t>(*tid);
  // Unsigned: a damaged tid or delta must wrap, not overflow (UB) as int64_t would.
  e.pid = static_cast<uint32_t>(*tid + static_cast<uint64_t>(unzigzag(*dp)));
  const uint8_t n = std::min<uint8_t>(state.nvalues[e.probe], kMaxValues);
  const uint32_t strings = e.probe < state.strings.size() ? state.strings[e.probe] : 0;
  for (uint8_t i = 0; i < n; i++) {
    auto v = get_varint(r);
    if (!v) return bad("EVENTS", r, "truncated sample values");
    if (strings >> i & 1) {
      // Read back, a string slot holds its StringPool id (model/string_value.h).
      const uint64_t len = *v >> 1;
      if (len > r.remaining()) return bad("EVENTS", r, "truncated string value");
      auto bytes = r.bytes(static_cast<std::size_t>(len));
      if (!bytes) return bad("EVENTS", r, "truncated string value");
      e.values[i] = e.missing >> i & 1 ? 0
                    : state.pool->intern(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()),
                                         (*v & 1) != 0);
      continue;
    }
    e.values[i] = static_cast<uint64_t>(unzigzag(*v));
  }
  e.nvalues = n;
  if (e.probe < state.frame.size() && state.frame[e.probe]) {
    auto sp = get_varint(r);
    if (!sp) return bad("EVENTS", r, "truncated sample stack pointer");
    e.frame = *sp;
  }
  if (e.probe < state.goroutine.size() && state.goroutine[e.probe]) {
    auto g = get_varint(r);
    if (!g) return bad("EVENTS", r, "truncated sample goroutine");
    e.goroutine = *g;
  }
  if (e.probe < state.stack.size() && state.stack[e.probe]) {
    auto nframes = get_varint(r);
    if (!nframes || *nframes > kMaxStoredFrames || *nframes * 2 > r.remaining())
      return bad("EVENTS", r, "bad sample stack");
    e.stack.resize(static_cast<std::size_t>(*nframes));
    for (auto& f : e.stack) {
      auto object = get_varint(r), offset = get_varint(r);
      if (!object || !offset || *object > UINT32_MAX) return bad("EVENTS", r, "truncated sample stack");
      f = {static_cast<uint32_t>(*object), *offset};
    }
  }
  if (e.probe < state.offcpu.size() && state.offcpu[e.probe]) {
    auto nkinds = get_varint(r);
    if (!nkinds || *nkinds > r.remaining()) return bad("EVENTS", r, "bad sample off-CPU times");
    for (uint64_t i = 0; i < *nkinds; i++) {
      auto t = get_varint(r);
      if (!t) return bad("EVENTS", r, "truncated sample off-CPU times");
      if (i < kOffCpuKinds) e.offcpu[i] = *t;
    }
  }
  return ok();
}

}  // namespace

Status decode_event(ByteReader& r, EventCodecState& state, Event& e) {
  auto kind = r.read<uint8_t>();
  auto dt = get_varint(r);
  if (!kind || !dt) return bad("EVENTS", r, "truncated event");
  // Unsigned: a delta may be negative (an older sample of another CPU), and wraps.
  state.time += static_cast<uint64_t>(unzigzag(*dt));
  e.time = state.time;
  e.probe = e.pid = e.tid = 0;
  e.nvalues = 0;
  e.missing = 0;
  e.lost = 0;
  e.lost_until = 0;
  e.frame = 0;
  e.goroutine = 0;
  e.stack.clear();
  e.offcpu = {};
  e.comm.clear();
  e.text.clear();
  switch (*kind) {
    case kPartialSampleKind:
    case static_cast<uint8_t>(EventKind::Sample):
      return decode_sample(r, *kind, state, e);
    case kScopedLostKind:
    case static_cast<uint8_t>(EventKind::Lost): {
      auto probe = get_varint(r), lost = get_varint(r);
      if (!probe || !lost) return bad("EVENTS", r, "truncated lost record");
      e.kind = EventKind::Lost;
      e.probe = *probe == 0 || *probe > state.nvalues.size() ? UINT32_MAX : static_cast<uint32_t>(*probe - 1);
      e.lost = *lost;
      if (*kind == kScopedLostKind) {
        auto tid = get_varint(r), dp = get_varint(r), span = get_varint(r);
        if (!tid || !dp || !span) return bad("EVENTS", r, "truncated lost record");
        e.tid = static_cast<uint32_t>(*tid);
        e.pid = static_cast<uint32_t>(*tid + static_cast<uint64_t>(unzigzag(*dp)));
        e.lost_until = *span ? e.time + *span : 0;
      }
      return ok();
    }
    case static_cast<uint8_t>(EventKind::Comm): {
      auto pid = get_varint(r), tid = get_varint(r);
      auto comm = get_string(r, 256);
      if (!pid || !tid || !comm) return bad("EVENTS", r, "truncated comm record");
      e.kind = EventKind::Comm;
      e.pid = static_cast<uint32_t>(*pid);
      e.tid = static_cast<uint32_t>(*tid);
      e.comm = std::move(*comm);
      return ok();
    }
    case static_cast<uint8_t>(EventKind::Exit): {
      auto pid = get_varint(r), tid = get_varint(r);
      if (!pid || !tid) return bad("EVENTS", r, "truncated exit record");
      e.kind = EventKind::Exit;
      e.pid = static_cast<uint32_t>(*pid);
      e.tid = static_cast<uint32_t>(*tid);
      return ok();
    }
    case static_cast<uint8_t>(EventKind::Fork): {
      auto pid = get_varint(r), tid = get_varint(r), ppid = get_varint(r), ptid = get_varint(r);
      if (!pid || !tid || !ppid || !ptid) return bad("EVENTS", r, "truncated fork record");
      e.kind = EventKind::Fork;
      e.pid = static_cast<uint32_t>(*pid);
      e.tid = static_cast<uint32_t>(*tid);
      e.values[0] = *ppid;
      e.values[1] = *ptid;
      e.nvalues = 2;
      return ok();
    }
    case static_cast<uint8_t>(EventKind::Object): {
      auto object = get_varint(r);
      auto path = get_string(r, 64 << 10);
      auto build_id = get_string(r, 256);
      if (!object || !path || !build_id) return bad("EVENTS", r, "truncated object record");
      if (*object == 0 || *object > UINT32_MAX) return bad("EVENTS", r, "bad object number");
      e.kind = EventKind::Object;
      e.object = static_cast<uint32_t>(*object);
      e.path = std::move(*path);
      e.build_id = std::move(*build_id);
      return ok();
    }
    default:
      return err("EVENTS at payload byte ", r.offset(), ": unknown event kind ", int{*kind});
  }
}

}  // namespace uprof
