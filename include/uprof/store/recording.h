// What a recording holds, in memory: the probe table, facts about the run, the
// event stream, and the trailer with the counts. The data file (data_file.h)
// stores exactly this; `report` and `script` read it back.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "uprof/arch/arch.h"

namespace uprof {

// Where a captured value comes from on each hit (raw values, as tracefs names them:
// %di, %x0, $stack3, $retval). Typed, named DWARF arguments add to this later.
enum class ValueSource : uint8_t {
  Register = 1,     // a user register: `reg` is its perf index
  Stack = 2,        // a stack slot: `stack_offset` bytes above the stack pointer at the probe
  ReturnValue = 3,  // the return register of a return probe (`reg` says which)
};

struct ValueSpec {
  std::string name;             // "%di", "$stack1", "$retval", or a DWARF parameter name
  ValueSource source = ValueSource::Register;
  uint16_t reg = 0;             // perf register index
  int32_t stack_offset = 0;     // for Stack
  uint8_t size = 8;             // bytes that hold the value
  bool is_signed = true;        // how to print it
  bool hex = false;             // print as 0x... (pointers, flags)
};

enum class ProbeKind : uint8_t { Entry = 0, Return = 1 };

struct ProbeInfo {
  uint32_t index = 0;           // position in the probe table; events refer to it
  ProbeKind kind = ProbeKind::Entry;
  std::string spec;
  std::string path;
  std::string build_id;
  std::string function;         // display name; "" for a raw offset outside every function
  std::string symbol;
  uint64_t file_offset = 0;
  uint64_t vaddr = 0;
  uint64_t offset_in_function = 0;
  std::vector<ValueSpec> values;
};

struct RecordingMeta {
  Arch arch = Arch::X86_64;
  std::vector<std::string> command;   // the workload's argv, or "-p PID"
  std::string kernel;                 // uname -r
  std::string hostname;
  std::string uprof_version;
  uint64_t start_realtime_ns = 0;     // wall clock at start, to show a date
  uint64_t start_monotonic_ns = 0;    // the same instant on the event clock (CLOCK_MONOTONIC)
  // The measured cost of one probe hit on this kernel (0 when unknown), for the
  // report's "the probe dominates" caveat.
  uint64_t probe_cost_ns = 0;
};

enum class EventKind : uint8_t {
  Sample = 1,   // a probe hit: probe, pid, tid, time, values
  Lost = 2,     // the kernel dropped `lost` samples (ring buffer full) before `time`
  Comm = 3,     // a thread got a name (exec, prctl): pid, tid, comm
  Exit = 4,     // a thread exited: pid, tid
  Fork = 5,     // a thread or process was created: pid, tid, parent pid/tid in values[0..1]
};

inline constexpr std::size_t kMaxValues = 16;

struct Event {
  EventKind kind = EventKind::Sample;
  uint32_t probe = 0;           // Sample, Lost (the probe whose ring buffer lost; UINT32_MAX if unknown)
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;            // CLOCK_MONOTONIC ns
  uint8_t nvalues = 0;
  std::array<uint64_t, kMaxValues> values{};  // raw 64-bit values, in the probe's ValueSpec order
  uint64_t lost = 0;            // Lost
  std::string comm;             // Comm
};

struct ProbeCount {
  uint64_t recorded = 0;        // samples written to the file
  uint64_t kernel = 0;          // the kernel's own hit count (read() on the event)
};

struct Trailer {
  uint64_t end_monotonic_ns = 0;
  uint64_t events = 0;          // every event written
  uint64_t lost = 0;            // sum of Lost events
  int32_t exit_status = 0;      // the workload's (128 + signal when killed), -1 when attached
  std::vector<ProbeCount> counts;  // one per probe, in table order
};

}  // namespace uprof
