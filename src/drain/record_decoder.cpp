#include "uprof/drain/record_decoder.h"

#include <sys/mman.h>

#include <cstdio>

#include <array>
#include <bit>
#include <string>

#include "uprof/util/byte_reader.h"

namespace uprof {
namespace {

struct NamedBit {
  uint64_t bit;
  std::string_view name;
};

// In the order the kernel writes them (perf_output_sample), supported ones first
// and in the middle, so an unsupported bit is named rather than mis-parsed.
constexpr std::array<NamedBit, 25> kSampleBits{{
    {PERF_SAMPLE_IDENTIFIER, "IDENTIFIER"}, {PERF_SAMPLE_IP, "IP"},
    {PERF_SAMPLE_TID, "TID"}, {PERF_SAMPLE_TIME, "TIME"},
    {PERF_SAMPLE_ADDR, "ADDR"}, {PERF_SAMPLE_ID, "ID"},
    {PERF_SAMPLE_STREAM_ID, "STREAM_ID"}, {PERF_SAMPLE_CPU, "CPU"},
    {PERF_SAMPLE_PERIOD, "PERIOD"}, {PERF_SAMPLE_READ, "READ"},
    {PERF_SAMPLE_CALLCHAIN, "CALLCHAIN"}, {PERF_SAMPLE_RAW, "RAW"},
    {PERF_SAMPLE_BRANCH_STACK, "BRANCH_STACK"}, {PERF_SAMPLE_REGS_USER, "REGS_USER"},
    {PERF_SAMPLE_STACK_USER, "STACK_USER"}, {PERF_SAMPLE_WEIGHT, "WEIGHT"},
    {PERF_SAMPLE_DATA_SRC, "DATA_SRC"}, {PERF_SAMPLE_TRANSACTION, "TRANSACTION"},
    {PERF_SAMPLE_REGS_INTR, "REGS_INTR"}, {PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR"},
    {PERF_SAMPLE_AUX, "AUX"}, {PERF_SAMPLE_CGROUP, "CGROUP"},
    {PERF_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE"}, {PERF_SAMPLE_CODE_PAGE_SIZE, "CODE_PAGE_SIZE"},
    {PERF_SAMPLE_WEIGHT_STRUCT, "WEIGHT_STRUCT"},
}};

constexpr uint64_t kSupported = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
                                PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                                PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

struct NamedType {
  uint32_t type;
  std::string_view name;
};

constexpr std::array<NamedType, 21> kRecordTypes{{
    {PERF_RECORD_MMAP, "MMAP"}, {PERF_RECORD_LOST, "LOST"}, {PERF_RECORD_COMM, "COMM"},
    {PERF_RECORD_EXIT, "EXIT"}, {PERF_RECORD_THROTTLE, "THROTTLE"},
    {PERF_RECORD_UNTHROTTLE, "UNTHROTTLE"}, {PERF_RECORD_FORK, "FORK"}, {PERF_RECORD_READ, "READ"},
    {PERF_RECORD_SAMPLE, "SAMPLE"}, {PERF_RECORD_MMAP2, "MMAP2"}, {PERF_RECORD_AUX, "AUX"},
    {PERF_RECORD_ITRACE_START, "ITRACE_START"}, {PERF_RECORD_LOST_SAMPLES, "LOST_SAMPLES"},
    {PERF_RECORD_SWITCH, "SWITCH"}, {PERF_RECORD_SWITCH_CPU_WIDE, "SWITCH_CPU_WIDE"},
    {PERF_RECORD_NAMESPACES, "NAMESPACES"}, {PERF_RECORD_KSYMBOL, "KSYMBOL"},
    {PERF_RECORD_BPF_EVENT, "BPF_EVENT"}, {PERF_RECORD_CGROUP, "CGROUP"},
    {PERF_RECORD_TEXT_POKE, "TEXT_POKE"}, {PERF_RECORD_AUX_OUTPUT_HW_ID, "AUX_OUTPUT_HW_ID"},
}};

// Reads named fields of one record, turning the first short read into an Error:
//   "decode: PERF_RECORD_SAMPLE of 44 bytes: byte 40: regs[1] needs 8 bytes, 4 left"
class FieldReader {
 public:
  FieldReader(std::span<const std::byte> record, uint32_t type)
      : r_(record), type_(type) {}

  template <class T>
  bool get(T& out, std::string_view field) {
    if (failed_) return false;
    std::size_t at = r_.offset();
    auto v = r_.read<T>();
    if (!v) return fail(at, field, sizeof(T));
    out = *v;
    return true;
  }

  bool bytes(std::span<const std::byte>& out, std::size_t n, std::string_view field) {
    if (failed_) return false;
    std::size_t at = r_.offset();
    auto v = r_.bytes(n);
    if (!v) return fail(at, field, n);
    out = *v;
    return true;
  }

  bool seek(std::size_t off, std::string_view what) {
    if (failed_) return false;
    if (!r_.seek(off)) return fail(off, what, 0);
    return true;
  }

  // A problem that is not a short read ("abi 7 is not a known ABI").
  bool invalid(std::size_t at, const std::string& what) {
    if (!failed_) error_ = err(prefix(), "byte ", at, ": ", what);
    failed_ = true;
    return false;
  }

  std::size_t offset() const { return r_.offset(); }
  std::size_t remaining() const { return r_.remaining(); }
  Error error() const { return error_; }

 private:
  std::string prefix() const {
    return "decode: " + record_type_name(type_) + " of " + std::to_string(r_.size()) + " bytes: ";
  }
  bool fail(std::size_t at, std::string_view field, std::size_t need) {
    error_ = err(prefix(), "byte ", at, ": ", field, " needs ", need, " bytes, ",
                 at <= r_.size() ? r_.size() - at : 0, " left");
    failed_ = true;
    return false;
  }

  ByteReader r_;
  uint32_t type_;
  bool failed_ = false;
  Error error_;
};

Status check_format(const SampleFormat& f) {
  if (uint64_t bad = f.sample_type & ~kSupported; bad != 0) {
    for (const auto& b : kSampleBits)
      if (bad & b.bit)
        return err("decode: sample_type bit PERF_SAMPLE_", b.name, " (0x", std::hex, b.bit,
                   ") is not supported");
    return err("decode: sample_type bits 0x", std::hex, bad, " are not supported");
  }
  if (f.reg_count < 64 && (f.regs_mask >> f.reg_count) != 0)
    return err("decode: register mask 0x", std::hex, f.regs_mask, " has bits beyond the ",
               std::dec, f.reg_count, " registers of the architecture");
  return ok();
}

// Size of the sample_id trailer for `sample_type` (8 bytes per field present).
std::size_t trailer_size(uint64_t sample_type) {
  std::size_t n = 0;
  for (uint64_t b : {PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID,
                     PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER})
    if (sample_type & b) n += 8;
  return n;
}

// Reads the trailer that ends the record; `body_end` is where the fixed body stopped.
bool read_trailer(FieldReader& r, std::size_t record_size, std::size_t body_end,
                  uint64_t sample_type, SampleId& out) {
  std::size_t n = trailer_size(sample_type);
  if (record_size < body_end + n)
    return r.invalid(body_end, "sample_id trailer needs " + std::to_string(n) + " bytes, " +
                                   std::to_string(record_size - body_end) + " left");
  if (!r.seek(record_size - n, "sample_id")) return false;
  if ((sample_type & PERF_SAMPLE_TID) && !(r.get(out.pid, "sample_id.pid") && r.get(out.tid, "sample_id.tid")))
    return false;
  if ((sample_type & PERF_SAMPLE_TIME) && !r.get(out.time, "sample_id.time")) return false;
  if ((sample_type & PERF_SAMPLE_ID) && !r.get(out.id, "sample_id.id")) return false;
  if ((sample_type & PERF_SAMPLE_STREAM_ID) && !r.get(out.stream_id, "sample_id.stream_id")) return false;
  uint32_t res = 0;
  if ((sample_type & PERF_SAMPLE_CPU) && !(r.get(out.cpu, "sample_id.cpu") && r.get(res, "sample_id.res")))
    return false;
  return !(sample_type & PERF_SAMPLE_IDENTIFIER) || r.get(out.id, "sample_id.identifier");
}

// { u64 size; u8 data[size]; u64 dyn_size } -- dyn_size only when size != 0 (the
// kernel writes size 0 alone when it has no user registers to find the stack by).
bool read_user_stack(FieldReader& r, Sample& s) {
  std::size_t size_at = r.offset();
  uint64_t size = 0;
  if (!r.get(size, "stack size")) return false;
  if (size == 0) return true;
  if (size > r.remaining())
    return r.invalid(size_at, err("stack size ", size, " exceeds the ", r.remaining(),
                                  " bytes left").message);
  if (!r.bytes(s.stack, static_cast<std::size_t>(size), "stack data")) return false;
  std::size_t dyn_at = r.offset();
  if (!r.get(s.stack_dyn_size, "stack dyn_size")) return false;
  if (s.stack_dyn_size > size)
    return r.invalid(dyn_at, err("stack dyn_size ", s.stack_dyn_size, " exceeds the stack size ",
                                 size).message);
  return true;
}

}  // namespace

unsigned perf_reg_count(const ArchInfo& arch) {
  unsigned n = 0;
  for (const auto& r : arch.regs) n = std::max(n, r.perf_index + 1u);
  return n;
}

SampleFormat sample_format(const perf_event_attr& attr, const ArchInfo& arch) {
  return SampleFormat{.sample_type = attr.sample_type,
                      .regs_mask = attr.sample_regs_user,
                      .reg_count = perf_reg_count(arch),
                      .sample_id_all = attr.sample_id_all != 0};
}

uint64_t supported_sample_bits() { return kSupported; }

std::string record_type_name(uint32_t type) {
  for (const auto& t : kRecordTypes)
    if (t.type == type) return "PERF_RECORD_" + std::string(t.name);
  return "PERF_RECORD_" + std::to_string(type);
}

std::optional<uint64_t> Sample::reg(unsigned perf_index) const {
  if (perf_index >= 64 || !(regs_mask & (1ull << perf_index))) return std::nullopt;
  unsigned k = static_cast<unsigned>(std::popcount(regs_mask & ((1ull << perf_index) - 1)));
  return regs[k];
}

Result<perf_event_header> decode_header(std::span<const std::byte> record) {
  ByteReader r(record);
  auto h = r.read<perf_event_header>();
  if (!h) return err("decode: record of ", record.size(), " bytes: shorter than its 8-byte header");
  if (h->size != record.size())
    return err("decode: ", record_type_name(h->type), ": header says ", h->size, " bytes, got ",
               record.size());
  return *h;
}

Result<std::optional<uint64_t>> record_identifier(std::span<const std::byte> record) {
  UPROF_ASSIGN(perf_event_header h, decode_header(record));
  ByteReader r(record);
  std::size_t at = 0;
  switch (h.type) {
    case PERF_RECORD_SAMPLE:
    case PERF_RECORD_LOST: at = 8; break;         // first field: IDENTIFIER / id
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE: at = 16; break;  // after u64 time
    default:
      if (record.size() < 16) return std::optional<uint64_t>{};
      at = record.size() - 8;  // the trailer's IDENTIFIER
  }
  auto id = r.peek_at<uint64_t>(at);
  if (!id)
    return err("decode: ", record_type_name(h.type), " of ", record.size(), " bytes: byte ", at,
               ": id needs 8 bytes");
  return std::optional<uint64_t>(*id);
}

Result<Sample> decode_sample(std::span<const std::byte> record, const SampleFormat& f) {
  UPROF_TRY(check_format(f));
  UPROF_ASSIGN(perf_event_header h, decode_header(record));
  if (h.type != PERF_RECORD_SAMPLE)
    return err("decode: expected PERF_RECORD_SAMPLE, got ", record_type_name(h.type));
  FieldReader r(record, h.type);
  r.seek(sizeof(perf_event_header), "header");
  Sample s;
  s.misc = h.misc;
  const uint64_t t = f.sample_type;
  uint32_t res = 0;
  bool good = (!(t & PERF_SAMPLE_IDENTIFIER) || r.get(s.id, "id")) &&
              (!(t & PERF_SAMPLE_IP) || r.get(s.ip, "ip")) &&
              (!(t & PERF_SAMPLE_TID) || (r.get(s.pid, "pid") && r.get(s.tid, "tid"))) &&
              (!(t & PERF_SAMPLE_TIME) || r.get(s.time, "time")) &&
              (!(t & PERF_SAMPLE_ADDR) || r.get(s.addr, "addr")) &&
              (!(t & PERF_SAMPLE_ID) || r.get(s.id, "id")) &&
              (!(t & PERF_SAMPLE_STREAM_ID) || r.get(s.stream_id, "stream_id")) &&
              (!(t & PERF_SAMPLE_CPU) || (r.get(s.cpu, "cpu") && r.get(res, "cpu.res"))) &&
              (!(t & PERF_SAMPLE_PERIOD) || r.get(s.period, "period"));
  if (good && (t & PERF_SAMPLE_RAW)) {
    // u32 size, then size bytes (padded by the kernel so that the sample stays 8-aligned).
    uint32_t size = 0;
    std::size_t at = r.offset();
    good = r.get(size, "raw size");
    if (good && size > r.remaining())
      good = r.invalid(at, err("raw data of ", size, " bytes, ", r.remaining(), " left").message);
    if (good) {
      s.raw = record.subspan(r.offset(), size);
      r.seek(r.offset() + size, "raw data");
    }
  }
  if (good && (t & PERF_SAMPLE_REGS_USER)) {
    std::size_t abi_at = r.offset();
    good = r.get(s.regs_abi, "regs abi");
    if (good && s.regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
      if (s.regs_abi != PERF_SAMPLE_REGS_ABI_32 && s.regs_abi != PERF_SAMPLE_REGS_ABI_64) {
        good = r.invalid(abi_at, "regs abi " + std::to_string(s.regs_abi) + " is not 0, 1 or 2");
      } else {
        // The kernel writes one u64 per set bit of the mask, lowest bit first.
        s.regs_mask = f.regs_mask;
        s.nregs = static_cast<uint8_t>(std::popcount(f.regs_mask));
        if (r.remaining() < 8u * s.nregs)
          good = r.invalid(r.offset(), err(unsigned{s.nregs}, " registers (mask 0x", std::hex, f.regs_mask,
                                           ") need ", std::dec, 8u * s.nregs, " bytes, ",
                                           r.remaining(), " left").message);
        for (unsigned k = 0; good && k < s.nregs; ++k) good = r.get(s.regs[k], "register");
      }
    }
  }
  if (good && (t & PERF_SAMPLE_STACK_USER)) good = read_user_stack(r, s);
  if (good && r.remaining() != 0)
    good = r.invalid(r.offset(), err(r.remaining(), " bytes left over: the record does not match "
                                     "sample_type 0x", std::hex, t).message);
  if (!good) return r.error();
  return s;
}

Result<LostRecord> decode_lost(std::span<const std::byte> record, const SampleFormat& f) {
  UPROF_ASSIGN(perf_event_header h, decode_header(record));
  if (h.type != PERF_RECORD_LOST)
    return err("decode: expected PERF_RECORD_LOST, got ", record_type_name(h.type));
  FieldReader r(record, h.type);
  r.seek(sizeof(perf_event_header), "header");
  LostRecord l;
  if (!(r.get(l.id, "id") && r.get(l.lost, "lost"))) return r.error();
  if (f.sample_id_all) {
    SampleId sid;
    if (!read_trailer(r, record.size(), r.offset(), f.sample_type, sid)) return r.error();
    l.sample_id = sid;
  }
  return l;
}

Result<ThrottleRecord> decode_throttle(std::span<const std::byte> record, const SampleFormat& f) {
  UPROF_ASSIGN(perf_event_header h, decode_header(record));
  if (h.type != PERF_RECORD_THROTTLE && h.type != PERF_RECORD_UNTHROTTLE)
    return err("decode: expected PERF_RECORD_THROTTLE, got ", record_type_name(h.type));
  FieldReader r(record, h.type);
  r.seek(sizeof(perf_event_header), "header");
  ThrottleRecord t;
  t.throttle = h.type == PERF_RECORD_THROTTLE;
  if (!(r.get(t.time, "time") && r.get(t.id, "id") && r.get(t.stream_id, "stream_id")))
    return r.error();
  if (f.sample_id_all) {
    SampleId sid;
    if (!read_trailer(r, record.size(), r.offset(), f.sample_type, sid)) return r.error();
    t.sample_id = sid;
  }
  return t;
}

// A record's NUL-padded string from byte `at` up to its sample_id trailer (COMM's name,
// MMAP2's file name) into `out`; where the trailer starts.
static Result<std::size_t> padded_name(std::span<const std::byte> record, std::size_t at, const SampleFormat& f,
                                std::string_view type, std::string_view what, std::string& out) {
  const std::size_t trailer = f.sample_id_all ? trailer_size(f.sample_type) : 0;
  if (record.size() < trailer || record.size() - trailer <= at)
    return err("decode: ", type, " at byte ", at, ": no room for the ", what);
  const std::size_t end = record.size() - trailer;
  const auto* p = reinterpret_cast<const char*>(record.data()) + at;
  std::size_t n = 0;
  while (n < end - at && p[n]) n++;
  out.assign(p, n);
  return end;
}

// PERF_RECORD_COMM: u32 pid, u32 tid, char comm[] NUL-padded to 8 bytes, sample_id.
//   COMM pid 4242 tid 4242 "workload\0\0\0\0\0\0\0\0" + trailer
Result<CommRecord> decode_comm(std::span<const std::byte> record, const SampleFormat& f) {
  UPROF_ASSIGN(perf_event_header h, decode_header(record));
  if (h.type != PERF_RECORD_COMM) return err("decode: expected PERF_RECORD_COMM, got ", record_type_name(h.type));
  FieldReader r(record, h.type);
  r.seek(sizeof(perf_event_header), "header");
  CommRecord c;
  c.exec = (h.misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
  if (!(r.get(c.pid, "pid") && r.get(c.tid, "tid"))) return r.error();
  UPROF_ASSIGN(const std::size_t name_end, padded_name(record, r.offset(), f, "PERF_RECORD_COMM", "name", c.comm));
  if (f.sample_id_all) {
    SampleId sid;
    if (!read_trailer(r, record.size(), name_end, f.sample_type, sid)) return r.error();
    c.sample_id = sid;
  }
  return c;
}

// PERF_RECORD_FORK / PERF_RECORD_EXIT: u32 pid, ppid, tid, ptid; u64 time; sample_id.
Result<TaskRecord> decode_task(std::span<const std::byte> record, const SampleFormat& f) {
  UPROF_ASSIGN(perf_event_header h, decode_header(record));
  if (h.type != PERF_RECORD_FORK && h.type != PERF_RECORD_EXIT)
    return err("decode: expected PERF_RECORD_FORK or EXIT, got ", record_type_name(h.type));
  FieldReader r(record, h.type);
  r.seek(sizeof(perf_event_header), "header");
  TaskRecord t;
  t.exit = h.type == PERF_RECORD_EXIT;
  if (!(r.get(t.pid, "pid") && r.get(t.ppid, "ppid") && r.get(t.tid, "tid") && r.get(t.ptid, "ptid") &&
        r.get(t.time, "time")))
    return r.error();
  if (f.sample_id_all) {
    SampleId sid;
    if (!read_trailer(r, record.size(), r.offset(), f.sample_type, sid)) return r.error();
    t.sample_id = sid;
  }
  return t;
}

// PERF_RECORD_MMAP2: u32 pid, tid; u64 addr, len, pgoff; u32 maj, min; u64 ino,
// ino_generation; u32 prot, flags; char filename[] NUL-padded to 8 bytes; sample_id.
// (With PERF_RECORD_MISC_MMAP_BUILD_ID the device and inode are a build-id instead:
// uprof never asks for it, and such a record keeps maj, min and ino at 0.)
//   MMAP2 pid 4242 addr 0x7f0000001000 len 0x1000 pgoff 0x1000 "/usr/lib/x86_64-linux-gnu/libc.so.6"
Result<MmapRecord> decode_mmap2(std::span<const std::byte> record, const SampleFormat& f) {
  UPROF_ASSIGN(perf_event_header h, decode_header(record));
  if (h.type != PERF_RECORD_MMAP2) return err("decode: expected PERF_RECORD_MMAP2, got ", record_type_name(h.type));
  FieldReader r(record, h.type);
  r.seek(sizeof(perf_event_header), "header");
  MmapRecord m;
  uint64_t generation = 0;
  if (!(r.get(m.pid, "pid") && r.get(m.tid, "tid") && r.get(m.addr, "addr") && r.get(m.len, "len") &&
        r.get(m.pgoff, "pgoff") && r.get(m.maj, "maj") && r.get(m.min, "min") && r.get(m.ino, "ino") &&
        r.get(generation, "ino_generation") && r.get(m.prot, "prot") && r.get(m.flags, "flags")))
    return r.error();
  if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
    m.maj = m.min = 0;
    m.ino = 0;
  }
  UPROF_ASSIGN(const std::size_t name_end,
               padded_name(record, r.offset(), f, "PERF_RECORD_MMAP2", "file name", m.filename));
  if (f.sample_id_all) {
    SampleId sid;
    if (!read_trailer(r, record.size(), name_end, f.sample_type, sid)) return r.error();
    m.sample_id = sid;
  }
  return m;
}

std::optional<std::string> proc_maps_line(const MmapRecord& m) {
  if (m.filename.size() < 2 || m.filename[0] != '/' || m.filename[1] == '/') return std::nullopt;
  char range[128];
  std::snprintf(range, sizeof range, "%llx-%llx %c%c%cp %08llx %02x:%02x %llu ",
                static_cast<unsigned long long>(m.addr), static_cast<unsigned long long>(m.addr + m.len),
                m.prot & PROT_READ ? 'r' : '-', m.prot & PROT_WRITE ? 'w' : '-', m.prot & PROT_EXEC ? 'x' : '-',
                static_cast<unsigned long long>(m.pgoff), m.maj, m.min, static_cast<unsigned long long>(m.ino));
  return range + m.filename;
}

Result<DecodedRecord> decode_record(std::span<const std::byte> record, const SampleFormat& f) {
  UPROF_ASSIGN(perf_event_header h, decode_header(record));
  switch (h.type) {
    case PERF_RECORD_SAMPLE: {
      UPROF_ASSIGN(Sample s, decode_sample(record, f));
      return DecodedRecord{s};
    }
    case PERF_RECORD_LOST: {
      UPROF_ASSIGN(LostRecord l, decode_lost(record, f));
      return DecodedRecord{l};
    }
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE: {
      UPROF_ASSIGN(ThrottleRecord t, decode_throttle(record, f));
      return DecodedRecord{t};
    }
    default:
      return DecodedRecord{OtherRecord{.type = h.type, .misc = h.misc, .size = h.size}};
  }
}

}  // namespace uprof
