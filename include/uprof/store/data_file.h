// The uprof data file (uprof.data). Little-endian; integers in payloads are LEB128
// varints ("v"), signed ones zigzag-encoded ("z"); strings are v length + bytes.
//
//   File     := Header Section*            META, PROBES, EVENTS..., TRAILER
//   Header   := magic "UPROFDAT"  u16 major=1  u16 minor=9  u8 arch (1 x86_64, 2 arm64)
//               u8 clock (1 = CLOCK_MONOTONIC)  u16 reserved=0                  (16 bytes)
//   Section  := u32 kind  u32 crc32(payload)  u64 payload_size  payload          (16 + n bytes)
//
//   kind 1 META     v count, then count x (string key, string value):
//                   argv (repeated, in order), kernel, hostname, uprof_version,
//                   start_realtime_ns, start_monotonic_ns, probe_cost_ns, probe_costs_ns
//                   and probe_hit_costs_ns (one number per probe, space-separated; absent
//                   in files of earlier 1.1 builds); unknown keys are skipped
//   kind 2 PROBES   v count, then per probe: v index, u8 kind (0 entry, 1 return,
//                   2 exit (1.2); flags above: 0x80 frame, 0x40 tail call (1.2), 0x20 USDT
//                   (1.4), 0x10 a site: a source line or an inlined copy (1.5), 0x08 goroutine:
//                   its samples end with Go's g (1.8)), string spec
//                   (the -e text), path, build_id, function, symbol, v file_offset, v vaddr,
//                   v offset_in_function, [a USDT probe: v pair_key (1.4)],
//                   [1.6: u8 role, string row: what the probe does in which report row, as
//                   the recorder knew it: 0 not recorded, 1 function entry, 2 function return,
//                   3 exit site, 4 inlined copy, 5 source line, 6 USDT start, 7 USDT done, 8 USDT
//                   probe of no pair, 9 an instruction (add+0x10, a raw offset): model/recording.h
//                   RowRole], [1.9: u8 capture: 1 each hit carries its call stack, 2 its
//                   thread's off-CPU totals], v nvalues, nvalues x (string name, u8 source,
//                   v reg, z stack_offset, u8 size, u8 flags: 1 signed, 2 hex, 4 typed,
//                   8 memory (1.3));
//                   source 1 register, 2 stack, 3 return value, 4 constant, 5 unavailable,
//                   6 the thread's name ($comm, 1.3);
//                   a typed value (format 1.1) goes on: u8 kind, string type, u8 flags
//                   (1 deref, 2 continues), z deref_offset, z constant, string reason,
//                   v total_size, v nenum x (z value, string name),
//                   v nmembers x (string name, v offset, u8 size, u8 kind, u8 signed);
//                   a memory value (1.3) then: u8 flags (1 deref, 2 string), z deref_offset,
//                   v nhops x z hop, v string_max
//   kind 3 EVENTS   v base_time, v count, then count events; each starts with u8 kind and
//                   a z time delta from the previous event (the first: from base_time):
//                     1 sample  z dt, v probe, v tid, z (pid - tid), probe.nvalues x z value,
//                               then v stack pointer when the probe has the frame flag,
//                               then v g when it has the goroutine flag (1.8);
//                               then, by its capture byte (1.9): v nframes, nframes x
//                               (v object, v offset) (model/recording.h StackFrame), and
//                               v nkinds, nkinds x v ns (OffCpuKind order)
//                               a string value (1.3) is v (length << 1 | cut) + its bytes
//                     6 sample with values that could not be read (1.1): as 1, then v missing
//                               (bit i: value i is not known; stored as 0) before the values
//                     2 lost    z dt, v probe + 1 (0: unknown), v lost: any thread may have lost events
//                     7 lost, scoped (1.7): as 2, then v tid (0: any thread), z (pid - tid), v the
//                               gap's length in ns (0: a point): model/recording.h EventKind::Lost
//                     3 comm    z dt, v pid, v tid, string comm
//                     4 exit    z dt, v pid, v tid
//                     5 fork    z dt, v pid, v tid, v ppid, v ptid
//                     8 object  z dt, v object (from 1), string path, string build_id (1.9)
//                   a block holds at most 16 MiB; the writer cuts blocks at 64 KiB
//   kind 4 TRAILER  v end_monotonic_ns, v events, v lost, z exit_status, v nprobes,
//                   nprobes x (v recorded, v kernel)
//
// Written as a stream: a file cut short (uprof killed, disk full) is readable up to
// its last whole section, and the missing TRAILER tells the reader it was cut.
// A section whose CRC does not match is skipped and reported with its byte offset.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "uprof/model/recording.h"
#include "uprof/model/string_value.h"
#include "uprof/store/byte_buffer.h"
#include "uprof/util/byte_reader.h"
#include "uprof/util/private_file.h"
#include "uprof/util/result.h"
#include "uprof/util/unique_fd.h"

namespace uprof {

inline constexpr char kDataMagic[8] = {'U', 'P', 'R', 'O', 'F', 'D', 'A', 'T'};
inline constexpr uint16_t kDataMajor = 1;
// 1.1: typed values; 1.2: exit probes and the stack pointer of their samples; 1.3:
// memory reads and strings; 1.4: USDT probes; 1.5: sites (source lines, inlined
// copies); 1.6: each probe's role and report row (the spec was there from 1.0); 1.7:
// losses of one thread, and the gap a loss spans (event kind 7); 1.8: the goroutine of a
// Go function's samples; 1.9: call stacks (record -g), the objects their frames name, and
// off-CPU times (record --off-cpu). Older files read the same; a newer minor may carry flags this
// build ignores.
inline constexpr uint16_t kDataMinor = 9;
inline constexpr std::size_t kHeaderSize = 16;
inline constexpr std::size_t kSectionHeaderSize = 16;
inline constexpr std::size_t kMaxSectionPayload = 16u << 20;

enum class SectionKind : uint32_t { Meta = 1, Probes = 2, Events = 3, Trailer = 4 };
// The event kind byte of a Sample whose `missing` mask is not 0.
inline constexpr uint8_t kPartialSampleKind = 6;
// The event kind byte of a Lost of one thread, or with a gap (1.7).
inline constexpr uint8_t kScopedLostKind = 7;

// Pure encoders and decoders of section payloads (tested on their own).
std::string encode_meta(const RecordingMeta& m);
Result<RecordingMeta> decode_meta(ByteReader& r, Arch arch);
std::string encode_probes(const std::vector<ProbeInfo>& probes);
// `minor`: the file's format minor (a 1.5 file has no role and row).
Result<std::vector<ProbeInfo>> decode_probes(ByteReader& r, uint16_t minor = kDataMinor);
std::string encode_trailer(const Trailer& t);
Result<Trailer> decode_trailer(ByteReader& r);

// What the EVENTS codec carries from one event to the next within a block: the time of
// the event before (at the block's start, its base_time), and how many values a sample
// of each probe holds (by ProbeInfo::index; the file stores no count per sample).
struct EventCodecState {
  uint64_t time = 0;
  std::vector<uint8_t> nvalues{};
  std::vector<bool> frame{};  // a sample of the probe ends with the stack pointer
  std::vector<bool> goroutine{};  // ... and then Go's g (1.8)
  std::vector<bool> stack{};      // ... and then its call stack (1.9)
  std::vector<bool> offcpu{};     // ... and then its thread's off-CPU totals (1.9)
  std::vector<uint32_t> strings{};  // per probe, bit i: value i is a string
  StringPool* pool = &recorded_strings();  // where a read sample's strings are interned
};
EventCodecState event_codec_state(const std::vector<ProbeInfo>& probes, uint64_t base_time);
// Appends one event (kind byte, time delta, fields) and moves state.time on to its time.
void encode_event(const Event& e, EventCodecState& state, ByteBuffer& out);
// The same, appended to a string (tests; the writer uses the buffer).
void encode_event(const Event& e, EventCodecState& state, std::string& out);
// Reads one event into `e` (every field the kind uses is set; values past nvalues are
// left as they were: `e` is reused, which keeps reading about twice as fast as making a
// new Event each time). An error names the byte of `r` where the event broke
// ("EVENTS at payload byte 41: truncated sample"): give it the whole payload.
Status decode_event(ByteReader& r, EventCodecState& state, Event& e);

// Whether DataFileWriter::create could write `path`, checked without creating it, so
// that `record` refuses a bad -o before it resolves, measures or starts anything:
// "store: /nope/u.data: the directory /nope does not exist", "store: u.data is a
// symbolic link (to /etc/passwd): ..." (util/private_file.h).
Status check_output_path(const std::string& path);

// The data file is a PrivateFile (util/private_file.h): made 0600 beside its name and
// owned by the sudo user; once its header, META and PROBES are written it is renamed
// onto its name, before the first event. From then on it is readable up to its last
// whole section whatever happens to uprof (SIGKILL included): an event block or the
// trailer is one write(2), and a failed write is cut back off.
class DataFileWriter {
 public:
  static Result<DataFileWriter> create(const std::string& path, const RecordingMeta& meta,
                                       const std::vector<ProbeInfo>& probes);
  DataFileWriter(DataFileWriter&&) = default;
  DataFileWriter& operator=(DataFileWriter&&) = default;
  ~DataFileWriter();

  // Events go into the current block; a full block is written out.
  Status add(const Event& e);
  // Writes the current block now (the record loop calls this after each drain).
  Status flush();
  // Flushes, then writes the trailer. The file is complete after this.
  Status finish(const Trailer& t);

  uint64_t bytes_written() const { return bytes_; }
  // A write failed (disk full, I/O error): the file ends at the last whole section.
  bool failed() const { return failed_; }
  // The errno of the failed write (ENOSPC, EDQUOT, EFBIG, EIO), 0 while none failed.
  int write_errno() const { return write_errno_; }
  uint64_t events_written() const { return events_; }
  const std::string& path() const { return path_; }

 private:
  DataFileWriter() = default;
  Status write_section(SectionKind kind, const std::string& payload);

  std::string path_;
  PrivateFile file_;
  EventCodecState codec_;         // per-probe value counts; the time of the last event
  ByteBuffer block_;              // encoded events of the current block
  uint64_t block_count_ = 0;
  uint64_t block_base_ = 0;
  uint64_t bytes_ = 0;
  uint64_t events_ = 0;
  bool failed_ = false;
  int write_errno_ = 0;
};

class DataFileReader {
 public:
  // Reads the header, META and PROBES; errors name the file and the byte offset.
  static Result<DataFileReader> open(const std::string& path);

  Arch arch() const { return meta_.arch; }
  const RecordingMeta& meta() const { return meta_; }
  const std::vector<ProbeInfo>& probes() const { return probes_; }

  // The next event in file order; false at the end or at damage that stops reading.
  bool next(Event& e);
  // After next() returned false: the trailer if the file was complete.
  const std::optional<Trailer>& trailer() const { return trailer_; }
  // What was wrong, if anything: "cut short at byte 1234 (no trailer)", a CRC
  // mismatch that was skipped, ... One line each.
  const std::vector<std::string>& problems() const { return problems_; }
  uint64_t file_size() const { return file_size_; }

 private:
  DataFileReader() = default;
  bool load_next_block();

  std::string path_;
  UniqueFd fd_;
  uint64_t file_size_ = 0;
  uint64_t pos_ = 0;                // file offset of the next section
  RecordingMeta meta_;
  std::vector<ProbeInfo> probes_;
  std::optional<Trailer> trailer_;
  std::vector<std::string> problems_;
  std::vector<std::byte> block_;
  ByteReader cur_;
  EventCodecState codec_;           // per-probe value counts; the time of the last event
  uint64_t block_offset_ = 0;       // file offset of the current block's payload
  uint64_t block_left_ = 0;         // events left in the current block
  bool done_ = false;
};

}  // namespace uprof
