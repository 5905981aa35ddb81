// The recording's data model, shared by every stage (it sits below them all, like arch/ and
// util/): what a recording holds, in memory: the probe table, facts about the run, the
// event stream, and the trailer with the counts. The data file (data_file.h)
// stores exactly this; `report` and `script` read it back.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "uprof/arch/arch.h"

namespace uprof {

// Where a captured value comes from on each hit. Raw values are spelled as tracefs
// spells them (%di, %x0, $stack3, $retval); typed values come from DWARF (a
// parameter by name, the typed return value) and may be a constant, or
// unavailable with the reason.
enum class ValueSource : uint8_t {
  Register = 1,     // a user register: `reg` is its perf index
  Stack = 2,        // a stack slot: `stack_offset` bytes above the stack pointer at the probe
  ReturnValue = 3,  // the return register of a return probe (`reg` says which)
  Constant = 4,     // DWARF says the value is `constant` (DW_AT_const_value, a folded argument)
  Unavailable = 5,  // DWARF cannot place it at this address: `reason` says why; nothing is captured
  Comm = 6,         // the thread's name at the hit ($comm): a String of at most 15 bytes (format 1.3)
};

// How a typed value prints. Raw values are Integer (signed or not, or hex).
// String: the bytes at an address, up to a NUL, at most `string_max` of them; its slot
// holds a StringPool id once read back (model/string_value.h).
enum class ValueKind : uint8_t { Integer = 0, Bool = 1, Char = 2, Enum = 3, Pointer = 4, Struct = 5, Float = 6, String = 7 };

// A member of a struct value, for printing `p={x=1, y=2}`.
struct StructMember {
  std::string name{};
  uint32_t offset = 0;          // bytes from the start of the struct
  uint8_t size = 8;             // 1, 2, 4 or 8; members of other sizes are not listed
  ValueKind kind = ValueKind::Integer;
  bool is_signed = true;
  bool operator==(const StructMember&) const = default;
};

// One captured 64-bit slot of an event. A value wider than 8 bytes (a struct
// passed in rdi:rsi, or in memory) takes several consecutive slots: the first
// carries the name and type, the rest have `continues` set.
// The value a Go function's entry probe reads from its goroutine's g: the goroutine's
// id (runtime.g's goid), which report --by-goroutine groups by.
inline constexpr std::string_view kGoroutineIdValue = "$goid";

struct ValueSpec {
  std::string name{};            // "%di", "$stack1", "$retval", or a DWARF parameter name
  ValueSource source = ValueSource::Register;
  uint16_t reg = 0;             // perf register index
  int32_t stack_offset = 0;     // for Stack
  uint8_t size = 8;             // bytes that hold the value (of this slot)
  bool is_signed = true;        // how to print it
  bool hex = false;             // print as 0x... (pointers, flags)
  // Typed (DWARF) values only:
  bool deref = false;           // the register / stack slot holds an address; the value is at
  int32_t deref_offset = 0;     //   address + deref_offset (a String: the string starts there)
  // Pointers followed before that last read (format 1.3): address = load8(address + hop)
  // for each, in order. `+0(+8(%di)):string` is %di, hops {8}, deref at +0, a String.
  std::vector<int32_t> hops{};
  uint16_t string_max = 0;      // String: the most bytes kept (the rest is cut, and says so)
  // The value is what a pointer points to (`p->x`, anywhere in memory), not a frame
  // slot DWARF locates: engines read it at the probe (capture_plan.h). Not stored.
  bool pointee = false;
  bool continues = false;       // the next bytes of the previous slot's value
  ValueKind kind = ValueKind::Integer;
  std::string type{};             // "int", "enum color", "struct pair", "char*"; "" for raw values
  int64_t constant = 0;         // Constant
  std::string reason{};           // Unavailable: "optimized out", ...
  uint32_t total_size = 0;      // first slot of a struct: the struct's size (more than the slots hold when cut)
  std::vector<std::pair<int64_t, std::string>> enumerators{};  // Enum
  std::vector<StructMember> members{};                         // Struct, first slot

  bool typed() const { return !type.empty() || source == ValueSource::Constant || source == ValueSource::Unavailable; }
  // Whether reading it needs user memory beyond the registers and the stack slot.
  bool reads_memory() const { return deref || !hops.empty(); }
  bool is_string() const { return kind == ValueKind::String; }
};

// Entry: a uprobe at the function's entry (or any instruction); Return: a return probe
// (the kernel's trampoline); Exit: a uprobe on one of the function's own exit
// instructions (`ret`, a tail-call jump), which measures returns where a trampoline
// could abort the program (record/unwind_risk.h). A function has one Exit probe per
// exit instruction.
enum class ProbeKind : uint8_t { Entry = 0, Return = 1, Exit = 2 };

// What a probe does in its report row, as the recorder knew it (format 1.6; older files
// do not say, and analyse/probe_functions.h guesses it from the names and flags):
//   -e add           Entry, Return (or Exit, one per exit instruction), row "add"
//   -e add+0x10      Instruction, row "add+0x10" (counts hits; so does a raw offset
//                    outside every function, row "./app:0x5000", unless BIN:0xOFF%return
//                    makes it an Entry)
//   -e twice         Inlined, row "twice", for each copy the compiler inlined
//   -e lines.c:23    Line, row "lines.c:23"
//   -e 'usdt:python:gc__*'   UsdtStart (gc__start), UsdtDone (gc__done), row "python:gc":
//                    the two halves of a pair (analyse/probe_functions.h); Usdt for a
//                    probe that is no pair's half, row "python:line"
// Unrecorded: a file older than 1.6, or a table built by hand.
enum class RowRole : uint8_t {
  Unrecorded = 0,
  Entry = 1,
  Return = 2,
  Exit = 3,
  Inlined = 4,
  Line = 5,
  UsdtStart = 6,
  UsdtDone = 7,
  Usdt = 8,
  Instruction = 9,
};
inline constexpr uint8_t kLastRowRole = static_cast<uint8_t>(RowRole::Instruction);
// "entry", "usdt-start", ...; "?" for a byte no role has.
std::string_view to_string(RowRole role);

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
  // Each hit carries the stack pointer (Event::frame): the entry and exit probes of a
  // function measured at its exits, so that pairing can tell the frames an exception
  // left. Exit probes at a tail-call jump have no return value yet (`tail_call`).
  bool frame = false;
  bool tail_call = false;
  // Each hit carries the running goroutine's g (Event::goroutine, format 1.8): the entry
  // and exit probes of a Go function, which pair by goroutine (analyse/pairing.h).
  bool goroutine = false;
  // A USDT probe (format 1.4): `function` is "PROVIDER:NAME". Two of them in one file
  // named as a pair (X__start and X__done, X__entry and X__return) make calls
  // (analyse/probe_functions.h); `pair_key` marks the value slots a return must match
  // in its entry (bit i: value i), such as python's file and function names.
  bool usdt = false;
  uint32_t pair_key = 0;
  // A point of code counted by name, with no return (format 1.5): a source line
  // ("lines.c:24") or an inlined copy of a function ("sq"). Every site of one name in a
  // file is one function that counts hits; an inlined copy shares the row of its
  // function's out-of-line copy (analyse/probe_functions.h).
  bool site = false;
  // Format 1.6: what the probe does (see RowRole) in which report row, as the recorder
  // knew it: "add", "add+0x10", "python:gc" (both halves of a pair), "lines.c:23".
  // `spec` (above) is the -e text it came from.
  RowRole role = RowRole::Unrecorded;
  std::string row{};
  // Format 1.9: each hit carries its call stack (record -g: Event::stack), or the thread's
  // off-CPU totals (record --off-cpu: Event::offcpu).
  bool stack = false;
  bool offcpu = false;
};

struct RecordingMeta {
  Arch arch = Arch::X86_64;
  std::vector<std::string> command;   // the workload's argv, or "-p PID"
  std::string kernel;                 // uname -r
  std::string hostname;
  std::string uprof_version;
  std::string engine{};               // the capture engine that recorded: "bpf", "perf" ("" in older files)
  std::string attach{};               // how its probes went on: "multi-uprobe links, sessions" ("" in older files)
  uint64_t start_realtime_ns = 0;     // wall clock at start, to show a date
  uint64_t start_monotonic_ns = 0;    // the same instant on the event clock (CLOCK_MONOTONIC)
  // What the probes add to a measured call on this kernel, from `uprof bench` (0 when
  // unknown): the smallest among the probed instructions' classes, so that it never
  // over-states any of them. Kept for readers of files without the per-probe figures.
  uint64_t probe_cost_ns = 0;
  // The same per probe (by ProbeInfo::index), from the class of the probe's own
  // instruction; empty when unknown (files written before it was stored).
  std::vector<uint64_t> probe_costs_ns{};
  // Per probe: what one hit of it costs in all (CPU ns), which is what it adds to any
  // call open around it on the same thread: for a function probed at entry and return,
  // half of `uprof bench`'s entry + return figure each; for an entry-only or return-only
  // probe, that probe's figure. Empty when unknown (files written before it was stored).
  std::vector<uint64_t> probe_hit_costs_ns{};
};

// record -g: one frame of a call's user stack: `offset` bytes into the file of object
// `object` (an Object event names it: path and build-id), or, for object 0 (code no file
// backs: JIT code, an unknown mapping), the address itself.
struct StackFrame {
  uint32_t object = 0;
  uint64_t offset = 0;
  bool operator==(const StackFrame&) const = default;
};

// record --off-cpu: where a thread's time off the CPU went while it was inside a probed
// call. Runnable: preempted or woken, waiting for a CPU. The others: blocked, by the
// system call it blocked in (a table per architecture says which call is which kind);
// Other: blocked outside a system call (a page fault that reads a file, a stop).
enum class OffCpuKind : uint8_t { Runnable = 0, Lock = 1, Io = 2, Sleep = 3, Syscall = 4, Other = 5 };
inline constexpr std::size_t kOffCpuKinds = 6;
// Nanoseconds per OffCpuKind. In an event: the thread's running totals at the hit (a
// call's share is its return's minus its entry's); in a call (analyse/pairing.h): its share.
using OffCpuTimes = std::array<uint64_t, kOffCpuKinds>;
// "runnable", "lock", "io", "sleep", "syscall", "other"
std::string_view to_string(OffCpuKind kind);

enum class EventKind : uint8_t {
  Sample = 1,   // a probe hit: probe, pid, tid, time, values
  // Events were dropped (a full ring): `lost` of them (0: unknown), and pairing must not
  // pair across the gap (analyse/pairing.h). Its scope:
  //   tid != 0  thread pid/tid lost events since its event before this one (the BPF
  //             engine marks a thread's next record after a drop)
  //   tid == 0  any thread may have lost events between `time` and `lost_until` (a per-CPU
  //             perf ring carries every thread that ran on that CPU); a point when
  //             `lost_until` is not above `time` (files before 1.7)
  Lost = 2,
  Comm = 3,     // a thread got a name (exec, prctl): pid, tid, comm
  Exit = 4,     // a thread exited: pid, tid
  Fork = 5,     // a thread or process was created: pid, tid, parent pid/tid in values[0..1]
  // A file that StackFrames name (format 1.9): `object` (its number, from 1), `path`,
  // `build_id`; written before the first frame that names it.
  Object = 8,
};

inline constexpr std::size_t kMaxValues = 32;

struct Event {
  EventKind kind = EventKind::Sample;
  uint32_t probe = 0;           // Sample, Lost (the probe whose ring buffer lost; UINT32_MAX if unknown)
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;            // CLOCK_MONOTONIC ns
  uint8_t nvalues = 0;
  std::array<uint64_t, kMaxValues> values{};  // raw 64-bit values, in the probe's ValueSpec order
  uint32_t missing = 0;         // Sample: bit i set when value i could not be read (stored as 0)
  uint64_t lost = 0;            // Lost
  uint64_t lost_until = 0;      // Lost of every thread (tid 0): the gap's end
  std::string comm;             // Comm
  uint64_t frame = 0;           // Sample of a ProbeInfo::frame probe: the stack pointer (0: unknown)
  uint64_t goroutine = 0;       // Sample of a ProbeInfo::goroutine probe: Go's g pointer (0: unknown)
  // Sample: the bytes of its String slots, from an engine to the store; each such
  // slot's value says where its bytes are (model/string_value.h). Read back, string
  // slots hold StringPool ids instead, and `text` is empty.
  std::string text{};
  // Sample of a ProbeInfo::stack probe (1.9): its callers, innermost first. Frame 0 is
  // where the probed function returns to (the call in its caller), then that caller's
  // caller, on to the first frame the unwinder reached (_start, clone, or where the
  // stack it was given ended). Empty: the stack could not be unwound at all.
  std::vector<StackFrame> stack{};
  // Sample of a ProbeInfo::offcpu probe (1.9): the thread's off-CPU totals at the hit.
  OffCpuTimes offcpu{};
  // Object (1.9): a file StackFrames name.
  uint32_t object = 0;
  std::string path{};
  std::string build_id{};
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
