// Raw perf records -> typed values. Pure: no syscalls, no state; every read goes
// through ByteReader, and a record that is too short or inconsistent becomes an
// Error naming the record type, the byte offset and the field, never a crash.
//
// A PERF_RECORD_SAMPLE with IDENTIFIER | TID | TIME | REGS_USER (DI, SI, AX on
// x86-64: mask 0x31) is, after the 8-byte header:
//   byte  8  u64 id          (PERF_SAMPLE_IDENTIFIER: always first)
//   byte 16  u32 pid, u32 tid
//   byte 24  u64 time
//   byte 32  u64 abi         (2 = PERF_SAMPLE_REGS_ABI_64, 0 = no registers follow)
//   byte 40  u64 regs[3]     in mask-bit order: AX (bit 0), SI (bit 4), DI (bit 5)
// and with STACK_USER: u64 size; size bytes; u64 dyn_size (valid bytes) when size != 0.
#pragma once

#include <linux/perf_event.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "uprof/arch/arch.h"
#include "uprof/util/result.h"

namespace uprof {

// What a sample holds, from the attr that produced it.
struct SampleFormat {
  uint64_t sample_type = 0;
  uint64_t regs_mask = 0;   // sample_regs_user
  unsigned reg_count = 64;  // the architecture's perf registers: mask bits >= this are refused
  bool sample_id_all = false;
};

// The perf register count of `arch` (x86-64 24, arm64 33): one past the highest index.
unsigned perf_reg_count(const ArchInfo& arch);
SampleFormat sample_format(const perf_event_attr& attr, const ArchInfo& arch);

// The sample_type bits this decoder can parse: IDENTIFIER IP TID TIME ADDR ID
// STREAM_ID CPU PERIOD RAW REGS_USER STACK_USER.
uint64_t supported_sample_bits();
// "PERF_RECORD_SAMPLE", "PERF_RECORD_MMAP2"; "PERF_RECORD_<n>" when unknown.
std::string record_type_name(uint32_t type);

struct Sample {
  uint16_t misc = 0;
  uint64_t id = 0;  // PERF_SAMPLE_IDENTIFIER (or PERF_SAMPLE_ID)
  uint64_t ip = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint64_t addr = 0;
  uint64_t stream_id = 0;
  uint32_t cpu = 0;
  uint64_t period = 0;
  // User registers. regs_abi 0 means the kernel had none to give (regs_mask 0 too).
  uint64_t regs_abi = 0;
  uint64_t regs_mask = 0;
  uint8_t nregs = 0;
  std::array<uint64_t, 64> regs{};  // in mask-bit order: regs[k] is the k-th set bit of regs_mask
  // User stack from SP upwards: the bytes copied (only the first stack_dyn_size are
  // valid). Points into the record: valid only as long as the record's bytes are.
  std::span<const std::byte> stack{};
  uint64_t stack_dyn_size = 0;
  // PERF_SAMPLE_RAW: a tracepoint's record (a tracefs uprobe's fetch arguments, laid
  // out as its format file says). Points into the record, like `stack`.
  std::span<const std::byte> raw{};

  // The value of perf register `perf_index` (x86-64 DI = 5), if the sample has it.
  std::optional<uint64_t> reg(unsigned perf_index) const;
  std::span<const std::byte> valid_stack() const { return stack.first(stack_dyn_size); }
};

// The sample_id trailer of non-sample records (attr.sample_id_all).
struct SampleId {
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint64_t id = 0;
  uint64_t stream_id = 0;
  uint32_t cpu = 0;
};

// PERF_RECORD_LOST: the kernel dropped `lost` samples of event `id` (ring full).
struct LostRecord {
  uint64_t id = 0;
  uint64_t lost = 0;
  std::optional<SampleId> sample_id{};
};

// PERF_RECORD_THROTTLE / UNTHROTTLE.
struct ThrottleRecord {
  bool throttle = true;  // false: UNTHROTTLE
  uint64_t time = 0;
  uint64_t id = 0;
  uint64_t stream_id = 0;
  std::optional<SampleId> sample_id{};
};

// PERF_RECORD_COMM: thread `tid` of `pid` is now called `comm` (exec or prctl).
// Asked for with attr.comm (and comm_exec); the time comes from the sample_id trailer.
struct CommRecord {
  uint32_t pid = 0, tid = 0;
  std::string comm;
  bool exec = false;  // PERF_RECORD_MISC_COMM_EXEC: the name changed because of an exec
  std::optional<SampleId> sample_id;
};

// PERF_RECORD_FORK / PERF_RECORD_EXIT (attr.task): a thread or process was created or ended.
struct TaskRecord {
  bool exit = false;
  uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
  uint64_t time = 0;
  std::optional<SampleId> sample_id;
};

// PERF_RECORD_MMAP2 (attr.mmap + mmap2): process `pid` mapped `len` bytes of `filename`
// from file offset `pgoff` at `addr` (executable mappings only, without attr.mmap_data).
// record -g on the perf engine: a process's mappings when it exited before uprof could
// read /proc/PID/maps.
struct MmapRecord {
  uint32_t pid = 0, tid = 0;
  uint64_t addr = 0, len = 0, pgoff = 0;
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0;
  uint32_t prot = 0, flags = 0;
  std::string filename;
  std::optional<SampleId> sample_id;
};

// Any other record: reported, not parsed.
struct OtherRecord {
  uint32_t type = 0;
  uint16_t misc = 0;
  uint16_t size = 0;
};

using DecodedRecord = std::variant<Sample, LostRecord, ThrottleRecord, OtherRecord>;

// The header, checked against the bytes given (its size must equal record.size()).
Result<perf_event_header> decode_header(std::span<const std::byte> record);

// The event id of a record, before knowing its layout: a SAMPLE's IDENTIFIER (the
// first field), a LOST's or THROTTLE's id field, otherwise the IDENTIFIER at the
// end of the sample_id trailer. Assumes IDENTIFIER in sample_type and
// sample_id_all set, as build_sample_attr does. nullopt for a record without one.
Result<std::optional<uint64_t>> record_identifier(std::span<const std::byte> record);

Result<Sample> decode_sample(std::span<const std::byte> record, const SampleFormat& format);
Result<LostRecord> decode_lost(std::span<const std::byte> record, const SampleFormat& format);
Result<ThrottleRecord> decode_throttle(std::span<const std::byte> record, const SampleFormat& format);
Result<CommRecord> decode_comm(std::span<const std::byte> record, const SampleFormat& format);
Result<TaskRecord> decode_task(std::span<const std::byte> record, const SampleFormat& format);
Result<MmapRecord> decode_mmap2(std::span<const std::byte> record, const SampleFormat& format);
// A file mapping as /proc/PID/maps prints it, for an unwinder that reads those lines:
//   "7f0000001000-7f0000003000 r-xp 00001000 fe:01 99 /usr/lib/libz.so.1"
// nullopt for anonymous memory ("//anon", "[heap]", "[vdso]"): no unwind information.
std::optional<std::string> proc_maps_line(const MmapRecord& m);
// Dispatches on the header's type.
Result<DecodedRecord> decode_record(std::span<const std::byte> record, const SampleFormat& format);

}  // namespace uprof
