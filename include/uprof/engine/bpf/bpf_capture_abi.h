/* What the BPF engine's kernel side and user side agree on: the per-probe capture
 * table uprof writes into a map before the probes start, the ring-buffer records
 * the BPF programs write, and the per-probe counters. Plain C with fixed-width
 * types: src/engine/bpf/uprof_capture.bpf.c includes it (clang -target bpf), and so
 * do the C++ encoder (bpf_capture_table.h) and decoder (bpf_records.h).
 *
 * A value slot is a short program of steps over one 64-bit accumulator:
 *   %di                      REG(di)
 *   $stack2                  REG(sp) READ(8 @ +16)
 *   struct at [sp+8], +4     REG(sp) READ(8 @ +8) READ(4 @ +4)     ("follow this pointer")
 *   +0(+8(%di)):string       REG(di) READ(8 @ +8) STR(@ +0, 66)
 * REG loads a register of the probed thread (by its byte offset in the kernel's
 * struct pt_regs, which uprof takes from the probed file's arch table); READ loads
 * SIZE bytes of user memory at accumulator + IMM. A failed READ marks the slot
 * missing. Steps run in order until END; the slot's value is the accumulator.
 * STR, always last, copies the NUL-terminated string at accumulator + IMM, at most
 * REG_OFF bytes with its NUL, into the record's text, and the slot's value says
 * where: offset << 32 | the bytes copied with the NUL. REG_OFF is string_max + 2: a
 * string of string_max + 1 bytes or more went on past string_max and is cut, and
 * one of exactly string_max is not. A probe with a STR slot writes HIT_TEXT records.
 */
#ifndef UPROF_ENGINE_BPF_CAPTURE_ABI_H
#define UPROF_ENGINE_BPF_CAPTURE_ABI_H

#include <linux/types.h>

#define UPROF_BPF_MAX_SLOTS 32 /* kMaxValues */
#define UPROF_BPF_MAX_STEPS 4
#define UPROF_BPF_REGS_BYTES 272 /* arm64 user_pt_regs: x0..x30, sp, pc, pstate */

enum uprof_bpf_op {
  UPROF_BPF_OP_END = 0,
  UPROF_BPF_OP_REG = 1,  /* acc = regs[reg_off / 8] */
  UPROF_BPF_OP_READ = 2, /* acc = SIZE bytes (1..8, zero-extended) of user memory at acc + imm */
  UPROF_BPF_OP_STR = 3,  /* the string at acc + imm, at most reg_off bytes with its NUL, into the text */
  UPROF_BPF_OP_COMM = 4, /* the thread's name (bpf_get_current_comm), into the text as STR does */
};

/* A HIT_TEXT record's text: the strings of its slots, one after another. */
#define UPROF_BPF_TEXT_BYTES 4096
#define UPROF_BPF_MAX_STRING 1026 /* string_max 1024, one more to tell a cut string, the NUL */

struct uprof_bpf_step {
  __u8 op;
  __u8 size;
  __u16 reg_off;
  __s32 imm;
};

struct uprof_bpf_slot {
  struct uprof_bpf_step steps[UPROF_BPF_MAX_STEPS];
};

/* One entry of the `probes` array map, indexed by the probe's attach cookie. */
struct uprof_bpf_probe {
  __u32 probe;  /* the recording's probe table index */
  __u32 nslots; /* value slots each hit writes */
  __u32 text;   /* 1: a slot reads a string (HIT_TEXT records) */
  __u32 faults; /* 1: a slot reads user memory behind an address: the sleepable program,
                   which may fault a page in (a page the process has not touched yet) */
  __u32 offcpu; /* record --off-cpu: a uprof_bpf_offcpu_role */
  struct uprof_bpf_slot slots[UPROF_BPF_MAX_SLOTS];
  __u32 stack;  /* record -g: a uprof_bpf_stack_mode */
  __u32 pad;
};

/* record -g: what a probe's hit does for the call stack (uprof_bpf_probe.stack). The
 * stack is unwound in user space (drain/unwind/): the hit copies the registers and the
 * top of the user stack into a STACK record, written just before its HIT record. */
enum uprof_bpf_stack_mode {
  UPROF_BPF_STACK_NONE = 0,
  UPROF_BPF_STACK_ALWAYS = 1,  /* a STACK record at every hit */
  UPROF_BPF_STACK_ENTRY = 2,   /* --stack-min: note the entry's time, per thread and call depth */
  UPROF_BPF_STACK_IF_LONG = 3, /* --stack-min: at a return or exit, a STACK record when the call took at
                                  least stack_min_ns since its entry (the caller chain is the entry's) */
};

/* The call depth --stack-min keeps entry times for; deeper calls get no stack. */
#define UPROF_BPF_CALL_DEPTH 64
/* The most user stack bytes a STACK record holds (as perf's --call-graph dwarf,SIZE). */
#define UPROF_BPF_STACK_MAX 65528
/* record --off-cpu. A probe of a function's entry, or of its return or exits, copies its
 * thread's off-CPU totals (UPROF_BPF_OFFCPU_KINDS u64, model/recording.h OffCpuKind order)
 * into its hit record, right after the record's `nvalues` values (inside a HIT_TEXT
 * record's fixed value area, UPROF_BPF_TEXT_SLOTS). An entry also counts the thread one
 * call deeper, a return or exit one call shallower: the scheduler programs add to the
 * totals only while a thread is inside a probed call (depth > 0). */
enum uprof_bpf_offcpu_role {
  UPROF_BPF_OFFCPU_NONE = 0,
  UPROF_BPF_OFFCPU_ENTER = 1, /* copy the totals, then depth + 1 */
  UPROF_BPF_OFFCPU_LEAVE = 2, /* copy the totals, then depth - 1 (never below 0) */
};
#define UPROF_BPF_OFFCPU_KINDS 6 /* kOffCpuKinds */
/* A HIT_TEXT record's value area: its slots, then room for the totals. */
#define UPROF_BPF_TEXT_SLOTS (UPROF_BPF_MAX_SLOTS + UPROF_BPF_OFFCPU_KINDS)
/* Syscall numbers the kind table (`offcpu_syscalls`) holds; a larger one is Syscall. */
#define UPROF_BPF_MAX_SYSCALLS 1024
enum uprof_bpf_offcpu_kind {
  UPROF_BPF_OFF_RUNNABLE = 0,
  UPROF_BPF_OFF_SYSCALL = 4,
  UPROF_BPF_OFF_OTHER = 5,
};

/* The `offcpu_task` task storage: a thread's off-CPU state, made at its first hit of an
 * off-CPU probe. */
struct uprof_bpf_offcpu {
  __u64 total[UPROF_BPF_OFFCPU_KINDS]; /* ns off the CPU by kind, while depth > 0 */
  __u64 since; /* when it left the CPU (or was woken), 0 while it runs */
  __u32 depth; /* probed calls open on the thread */
  __u32 kind;  /* what it is off the CPU for since `since` */
};

enum uprof_bpf_record_kind {
  UPROF_BPF_HIT = 1,  /* a probe hit: values[0..nvalues) */
  UPROF_BPF_FORK = 2, /* pid/tid created; values[0] = parent pid, values[1] = parent tid */
  UPROF_BPF_EXIT = 3, /* pid/tid exited */
  UPROF_BPF_COMM = 4, /* pid/tid took the name in values[0..2) (16 bytes, NUL-padded) */
  UPROF_BPF_HIT_TEXT = 5, /* a hit with strings: UPROF_BPF_TEXT_SLOTS values, then `reserved` text bytes */
  /* The call stack of the thread's next HIT record (same tid and time): the probed
   * thread's struct pt_regs in UPROF_BPF_REGS_BYTES bytes, then `missing` bytes of its user
   * stack from the stack pointer up (the record has room for the plan's stack size). */
  UPROF_BPF_STACK = 6,
};

/* Set in a record's `kind` when records of the same thread (tid) were dropped since
 * its record before this one (the ring had no room): the user side must not pair an
 * entry before this record with a return from it on. How many were dropped is in
 * bits 16..31 of `reserved` (at most 65535; a larger count spills into the thread's
 * next record). Which threads lost records is kept only while one has: a thread's
 * drop notes it (`lost_threads`, an LRU hash), its next record written takes the note,
 * and `lost_pending` (the notes open) keeps every record free of the lookup while it is 0. */
#define UPROF_BPF_LOST_BEFORE 0x80
#define UPROF_BPF_KIND_MASK 0x7f

/* Every ring-buffer record starts with this; values follow (8 bytes each). A hit's
 * record is reserved in a size class at least as large as it needs. */
struct uprof_bpf_record {
  __u8 kind; /* a uprof_bpf_record_kind, with UPROF_BPF_LOST_BEFORE */
  __u8 nvalues;
  __u16 cpu; /* where it was written: the ring's order holds per CPU */
  __u32 probe;
  __u32 pid;
  __u32 tid;
  __u64 time; /* bpf_ktime_get_ns: CLOCK_MONOTONIC */
  __u32 missing; /* bit i: slot i could not be read (stored as 0) */
  __u32 reserved; /* bits 0..15, HIT_TEXT: the text bytes after the values; bits 16..31, with
                     UPROF_BPF_LOST_BEFORE: the thread's records dropped before this one */
};

/* The `lost_threads` LRU hash (by tid): a thread whose records were dropped since its last
 * record written. */
struct uprof_bpf_lost {
  __u32 records; /* dropped */
  __u32 pid;     /* its tgid, for the marker the user side makes of a note never taken */
};

/* Per probe, per CPU (a per-CPU array indexed by cookie). hits == written + dropped. */
struct uprof_bpf_counts {
  __u64 hits;    /* hits by a followed thread */
  __u64 written; /* records submitted */
  __u64 dropped; /* records the ring had no room for */
};

/* The `tasks` hash map: a followed process (by tgid). */
struct uprof_bpf_task {
  __u32 threads; /* live threads; the entry goes when the last one exits */
  __u32 active;  /* 0 until the process execs (a launched workload starts at its exec) */
};

#endif
