/* The BPF engine's kernel side (engine/bpf/bpf_engine.h): one program runs on every
 * probe's uprobe-PMU event and writes what the probe's capture table asks for into
 * one BPF ring buffer; three raw tracepoints keep the set of followed processes
 * (fork, exit, exec) and report task events. No per-probe code: the attach cookie
 * names the probe, and its table entry (bpf_capture_abi.h) says what to read.
 * Compiled once with clang -target bpf; registers are addressed by byte offset in
 * struct pt_regs, which user space takes from the probed arch's table, so the same
 * object serves x86-64 and arm64.
 *
 * Each hit program has a sleepable twin (the `_s` programs) for probes that read user
 * memory behind a pointer (bpf_capture_abi.h, `faults`): a non-sleepable program cannot
 * take a page fault, so a string or member in a page the process has not touched yet
 * (a string in a fresh .rodata page, a file just mapped) reads as nothing; the twin
 * reads with bpf_copy_from_user(_str), which faults the page in as the process's own
 * access would. Probes that read only registers and the stack keep the cheaper path. */
#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "uprof/engine/bpf/bpf_capture_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile __u32 follow_all = 0;        /* -a: every process */
/* uprof itself, never followed: with -a on a function uprof calls too (libc:malloc),
 * each record it drains would make another, and the drain would never end. */
const volatile __u32 self_tgid = 0;
const volatile __u64 wakeup_bytes = 1 << 20; /* wake the reader when this much waits */

/* Set by user space once every probe is attached, cleared before they are detached:
 * all probes start and stop at one instant, so no call is cut in half by the time
 * attaching or detaching the probes one by one takes. */
volatile __u32 running = 0;

/* Only the fields uprof reads; libbpf relocates them against the kernel's BTF. */
struct task_struct {
  int pid;
  int tgid;
} __attribute__((preserve_access_index));
_Static_assert(UPROF_BPF_TEXT_SLOTS == 38, "the largest hit record's class (hit_plain)");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 24); /* resized by user space */
} events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1); /* resized to the probe count */
  __type(key, __u32);
  __type(value, struct uprof_bpf_probe);
} probes SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1); /* resized to the probe count */
  __type(key, __u32);
  __type(value, struct uprof_bpf_counts);
} counts SEC(".maps");

/* [0]: task records the ring had no room for. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} task_drops SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, __u32);
  __type(value, struct uprof_bpf_task);
} tasks SEC(".maps");

/* Threads whose hit records were dropped (bpf_capture_abi.h, UPROF_BPF_LOST_BEFORE):
 * noted by the drop, taken by the thread's next record written. LRU: a note is never
 * refused; one evicted (65,536 threads losing at once) loses its marker. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, __u32);
  __type(value, struct uprof_bpf_lost);
} lost_threads SEC(".maps");

/* Notes in `lost_threads` (an evicted one stays counted: a lookup per record, no harm).
 * 0 while nothing is lost: then a record costs one load of it, no map lookup. */
volatile __u32 lost_pending = 0;

/* A record of thread `tid` (process `pid`) was dropped: `n` records, with those a record
 * that could not be written had taken from the note (lost_carried). */
static __always_inline void note_lost(__u32 pid, __u32 tid, __u32 n) {
  struct uprof_bpf_lost *l = bpf_map_lookup_elem(&lost_threads, &tid);
  if (l) {
    l->records += n; /* a thread's programs run one at a time */
    return;
  }
  struct uprof_bpf_lost note = {.records = n, .pid = pid};
  if (bpf_map_update_elem(&lost_threads, &tid, &note, BPF_NOEXIST) == 0) __sync_fetch_and_add(&lost_pending, 1);
}

/* The drops a record carries (0 without UPROF_BPF_LOST_BEFORE): if it is dropped in turn,
 * they go back into the note with it. */
static __always_inline __u32 lost_carried(const struct uprof_bpf_record *r) {
  return r->kind & UPROF_BPF_LOST_BEFORE ? r->reserved >> 16 : 0;
}

/* A hit record of probe counts `c` could not be reserved or written. */
static __always_inline void hit_dropped(struct uprof_bpf_counts *c, __u32 pid, __u32 tid, __u32 carried) {
  c->dropped++;
  note_lost(pid, tid, 1 + carried);
}

/* Marks `r` when its thread lost records since its last one; called by fill_header. */
static __always_inline void mark_lost_before(struct uprof_bpf_record *r) {
  if (!lost_pending) return;
  __u32 tid = r->tid;
  struct uprof_bpf_lost *l = bpf_map_lookup_elem(&lost_threads, &tid);
  if (!l) return;
  __u32 n = l->records;
  if (n > 0xffff) {
    l->records = n - 0xffff; /* the rest on the thread's next record */
    n = 0xffff;
  } else if (bpf_map_delete_elem(&lost_threads, &tid) == 0) {
    __sync_fetch_and_add(&lost_pending, -1);
  }
  r->kind |= UPROF_BPF_LOST_BEFORE;
  r->reserved |= n << 16;
}

static __always_inline __u64 submit_flags(void) {
  return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void fill_header(struct uprof_bpf_record *r, __u8 kind, __u32 pid, __u32 tid, __u64 time) {
  r->kind = kind;
  r->nvalues = 0;
  r->cpu = (__u16)bpf_get_smp_processor_id();
  r->probe = 0;
  r->pid = pid;
  r->tid = tid;
  r->time = time;
  r->missing = 0;
  r->reserved = 0;
  mark_lost_before(r);
}

/* A hit with strings is built here, then copied into the ring: its size is known
 * only once the strings are read. The text has room for a whole string past
 * UPROF_BPF_TEXT_BYTES, so that the verifier sees every copy in bounds, and is a
 * power of two, so that the length copied out is bounded by a mask: 6.1's verifier
 * does not carry a comparison's bound to another copy of the value clang reloads. */
#define TEXT_ROOM 8192
_Static_assert(TEXT_ROOM == 8192 && TEXT_ROOM >= UPROF_BPF_TEXT_BYTES + 2048, "text room for a copy at any masked position");
_Static_assert(UPROF_BPF_TEXT_BYTES == 4096 && UPROF_BPF_MAX_STRING < 2048, "the masks below");
struct text_hit {
  struct uprof_bpf_record h;
  __u64 v[UPROF_BPF_TEXT_SLOTS]; /* the slots, then room for the off-CPU totals */
  char text[TEXT_ROOM];
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct text_hit);
} scratch SEC(".maps");

/* Present on 6.12+ (weak: the object loads without it; a sleepable text program that
 * calls it is only loaded where the kernel has it). Copies as bpf_probe_read_user_str
 * does, and may fault the pages in: sleepable programs only. */
extern int bpf_copy_from_user_str(void *dst, __u32 dst__sz, const void *unsafe_ptr__ign, __u64 flags) __ksym __weak;

/* One read of user memory: `sleepable` is a constant in each program (the functions
 * are inlined), so a program calls one helper or the other. */
static __always_inline long read_user(void *dst, __u32 size, const void *src, const bool sleepable) {
  return sleepable ? bpf_copy_from_user(dst, size, src) : bpf_probe_read_user(dst, size, src);
}

/* A sleepable program's scratch: one per thread, made at its first such hit. A per-CPU
 * one would be shared by every thread that runs on the CPU while the first sleeps in a
 * page fault (the program keeps its CPU, not the CPU to itself). */
struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct text_hit);
} scratch_task SEC(".maps");

/* record --off-cpu (bpf_capture_abi.h): per thread, its time off the CPU by kind while it
 * is inside a probed call. The hit programs copy a thread's totals into their records and
 * keep its depth of probed calls; two scheduler programs add each interval off the CPU of
 * a thread whose depth is above 0:
 *   sched_switch, the thread leaves:   preempted or yielding (still TASK_RUNNING) ->
 *                                      Runnable; else blocked, by the system call it is
 *                                      in (`offcpu_syscalls`), or Other outside one
 *   sched_wakeup, a blocked one wakes: its blocked time ends; waiting for a CPU, Runnable
 *   sched_switch, the thread comes on: the interval ends
 * Every other thread costs the two programs a task-storage lookup that finds nothing.
 * Set by user space before load; 0 leaves all of it out of the verified programs. */
const volatile __u32 offcpu_on = 0;
/* Where the kernel's saved user registers hold the system call a thread is in (the
 * host's arch/ table, syscall_kinds.h): the number's offset and size, and on x86-64 the
 * register that holds busy_value (-ENOSYS) during a system call. */
const volatile __u32 sys_nr_off = 0;
const volatile __u32 sys_nr_size = 8;
const volatile __u32 sys_busy_check = 0;
const volatile __u32 sys_busy_off = 0;
const volatile __s64 sys_busy_value = 0;

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct uprof_bpf_offcpu);
} offcpu_task SEC(".maps");

/* System call number -> its kind (a uprof_bpf_offcpu_kind), written by user space. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, UPROF_BPF_MAX_SYSCALLS);
  __type(key, __u32);
  __type(value, __u32);
} offcpu_syscalls SEC(".maps");

static __always_inline void offcpu_step(struct uprof_bpf_offcpu *o, __u32 role) {
  if (role == UPROF_BPF_OFFCPU_ENTER)
    o->depth++;
  else if (o->depth > 0)
    o->depth--;
}

/* Copies the current thread's totals to v[n .. n + UPROF_BPF_OFFCPU_KINDS) (v has `cap`
 * slots) and moves its depth by `role`. 0 when the thread has no storage and none could
 * be made: the hit is then dropped, as a call without its totals would read as all on
 * the CPU. */
static __always_inline int offcpu_put(__u64 *v, const __u32 cap, __u32 n, __u32 role) {
  struct uprof_bpf_offcpu *o =
      bpf_task_storage_get(&offcpu_task, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!o) return 0;
  for (__u32 k = 0; k < UPROF_BPF_OFFCPU_KINDS; k++) {
    __u32 at = n + k;
    /* The bound is checked on `at` itself: clang otherwise tests n against cap - 1 - k
     * (`if n == 7`), which 6.1's verifier cannot turn into a bound on n + k
     * ("invalid access to memory, mem_size=96 off=96"). */
    asm volatile("" : "+r"(at));
    if (at < cap) v[at] = o->total[k];
  }
  offcpu_step(o, role);
  return 1;
}

/* A hit whose record the ring had no room for still opens or closes its call: a dropped
 * return that left its thread one call deeper would keep the thread followed for ever. */
static __always_inline void offcpu_dropped(__u32 role) {
  if (!offcpu_on || !role) return;
  struct uprof_bpf_offcpu *o = bpf_task_storage_get(&offcpu_task, bpf_get_current_task_btf(), 0, 0);
  if (o) offcpu_step(o, role);
}

/* Ends the thread's interval off the CPU at `now`, adding it to its kind. */
static __always_inline void offcpu_add(struct uprof_bpf_offcpu *o, __u64 now) {
  __u32 k = o->kind;
  if (k < UPROF_BPF_OFFCPU_KINDS && now > o->since) o->total[k] += now - o->since;
  o->since = 0;
}

/* What a thread that blocks is blocked in: the kind of its system call, or Other. */
static __always_inline __u32 blocked_kind(struct task_struct *task) {
  long regs = (long)bpf_task_pt_regs(task);
  if (!regs) return UPROF_BPF_OFF_OTHER;
  __s64 nr = -1;
  if (sys_nr_size == 4) {
    __s32 nr32 = -1;
    if (bpf_probe_read_kernel(&nr32, 4, (void *)(regs + sys_nr_off))) return UPROF_BPF_OFF_OTHER;
    nr = nr32;
  } else if (bpf_probe_read_kernel(&nr, 8, (void *)(regs + sys_nr_off))) {
    return UPROF_BPF_OFF_OTHER;
  }
  if (nr < 0) return UPROF_BPF_OFF_OTHER;
  if (sys_busy_check) {
    __s64 busy = 0;
    if (bpf_probe_read_kernel(&busy, 8, (void *)(regs + sys_busy_off)) || busy != sys_busy_value)
      return UPROF_BPF_OFF_OTHER;
  }
  if (nr >= UPROF_BPF_MAX_SYSCALLS) return UPROF_BPF_OFF_SYSCALL;
  __u32 key = (__u32)nr;
  __u32 *kind = bpf_map_lookup_elem(&offcpu_syscalls, &key);
  return kind ? *kind : UPROF_BPF_OFF_SYSCALL;
}

/* tp_btf/sched_switch: (bool preempt, struct task_struct *prev, struct task_struct *next,
 * unsigned int prev_state), Linux 5.18+. */
SEC("tp_btf/sched_switch")
int uprof_offcpu_switch(__u64 *ctx) {
  if (!offcpu_on) return 0;
  const bool preempt = ctx[0];
  struct task_struct *prev = (struct task_struct *)ctx[1];
  struct task_struct *next = (struct task_struct *)ctx[2];
  const __u32 prev_state = (__u32)ctx[3];
  __u64 now = 0;
  struct uprof_bpf_offcpu *o = bpf_task_storage_get(&offcpu_task, prev, 0, 0);
  if (o && o->depth > 0) {
    now = bpf_ktime_get_ns();
    o->since = now;
    o->kind = preempt || prev_state == 0 /* TASK_RUNNING */ ? UPROF_BPF_OFF_RUNNABLE : blocked_kind(prev);
  }
  o = bpf_task_storage_get(&offcpu_task, next, 0, 0);
  if (o && o->since) offcpu_add(o, now ? now : bpf_ktime_get_ns());
  return 0;
}

/* tp_btf/sched_wakeup: (struct task_struct *p). A blocked thread's wait for a CPU starts. */
SEC("tp_btf/sched_wakeup")
int uprof_offcpu_wakeup(__u64 *ctx) {
  if (!offcpu_on) return 0;
  struct task_struct *task = (struct task_struct *)ctx[0];
  struct uprof_bpf_offcpu *o = bpf_task_storage_get(&offcpu_task, task, 0, 0);
  if (!o || !o->since || o->kind == UPROF_BPF_OFF_RUNNABLE) return 0;
  __u64 now = bpf_ktime_get_ns();
  offcpu_add(o, now);
  o->since = now;
  o->kind = UPROF_BPF_OFF_RUNNABLE;
  return 0;
}

/* Runs one slot's steps; returns 0 when a read failed, 1 with the value in *out, 2
 * for a string: its address in *out and the most bytes to copy in *max. */
static __always_inline int run_slot(void *ctx, const struct uprof_bpf_slot *slot, __u64 *out, __u32 *max,
                                    const bool sleepable) {
  __u64 acc = 0;
  for (int s = 0; s < UPROF_BPF_MAX_STEPS; s++) {
    const struct uprof_bpf_step *st = &slot->steps[s];
    if (st->op == UPROF_BPF_OP_STR) {
      *out = acc + (__s64)st->imm;
      *max = st->reg_off;
      return 2;
    }
    if (st->op == UPROF_BPF_OP_COMM) {
      *max = st->reg_off;
      return 3;
    }
    if (st->op == UPROF_BPF_OP_REG) {
      __u32 off = st->reg_off;
      if (off > UPROF_BPF_REGS_BYTES - 8) return 0;
      if (bpf_probe_read_kernel(&acc, 8, (void *)((long)ctx + off))) return 0;
    } else if (st->op == UPROF_BPF_OP_READ) {
      __u64 v = 0;
      __u32 size = st->size;
      if (size == 0 || size > 8) size = 8;
      long rc = read_user(&v, size, (void *)(long)(acc + (__s64)st->imm), sleepable);
      if (rc) return 0;
      acc = v;
    } else {
      break;
    }
  }
  *out = acc;
  return 1;
}

/* Reserves a hit record of CAP slots, fills it, submits it. A sleepable program may
 * sleep in a read while it holds the reservation: the reader waits for that record
 * (records after it are held back, not lost). */
#define EMIT_HIT(CAP, SLEEPABLE)                                                                \
  do {                                                                                  \
    struct hit##CAP {                                                                   \
      struct uprof_bpf_record h;                                                        \
      __u64 v[CAP];                                                                     \
    } *r = bpf_ringbuf_reserve(&events, sizeof(struct hit##CAP), 0);                    \
    if (!r) {                                                                           \
      offcpu_dropped(p->offcpu);                                                        \
      hit_dropped(c, tgid, tid, 0);                                                     \
      return 0;                                                                         \
    }                                                                                   \
    fill_header(&r->h, UPROF_BPF_HIT, tgid, tid, time);                                 \
    r->h.probe = p->probe;                                                              \
    r->h.nvalues = (__u8)n;                                                             \
    __u32 missing = 0;                                                                  \
    /* Values fill at most UPROF_BPF_MAX_SLOTS of the CAP slots (the rest, off-CPU      \
     * totals): a loop to CAP would let 6.1's verifier walk past p->slots, as it does   \
     * not see that i >= n for a constant i above n's bound (EACCES on arm64's 6.1). */ \
    for (__u32 i = 0; i < CAP && i < UPROF_BPF_MAX_SLOTS; i++) {                        \
      if (i >= n) break;                                                                \
      r->v[i] = 0;                                                                      \
      __u32 unused;                                                                     \
      if (run_slot(ctx, &p->slots[i], &r->v[i], &unused, SLEEPABLE) != 1)               \
        missing |= 1u << i;                                                             \
    }                                                                                   \
    r->h.missing = missing;                                                             \
    if (offcpu_on && p->offcpu && !offcpu_put(r->v, CAP, n, p->offcpu)) {               \
      __u32 carried = lost_carried(&r->h);                                              \
      bpf_ringbuf_discard(r, 0);                                                        \
      hit_dropped(c, tgid, tid, carried);                                               \
      return 0;                                                                         \
    }                                                                                   \
    bpf_ringbuf_submit(r, submit_flags());                                              \
    c->written++;                                                                       \
    return 0;                                                                           \
  } while (0)

/* A hit of a probe with string slots is built in `scratch`, then copied into the
 * ring, by its own program (uprof_hit_text): its slots are filled by a bpf_loop
 * callback, which the verifier checks once, where an unrolled loop of 32 slots, each
 * of which may or may not read a string, makes too many states for 6.1's verifier
 * (E2BIG). bpf_loop is 5.17+: without it only string probes are refused. */
struct text_fill {
  void *ctx;
  const struct uprof_bpf_probe *p;
  struct text_hit *r;
  __u32 n;
  __u32 pos;
  __u32 missing;
};

static __always_inline long fill_text_slot(__u32 i, void *data, const bool sleepable) {
  struct text_fill *f = data;
  if (i >= f->n || i >= UPROF_BPF_MAX_SLOTS) return 1;
  __u64 v = 0;
  __u32 max = 0;
  int got = run_slot(f->ctx, &f->p->slots[i & (UPROF_BPF_MAX_SLOTS - 1)], &v, &max, sleepable);
  char comm[16];
  if (got == 3) { /* $comm: copied like a string, from the kernel's copy of the name */
    __builtin_memset(comm, 0, sizeof comm);
    bpf_get_current_comm(comm, sizeof comm);
  }
  if (got == 2 || got == 3) {
    long rc = -1;
    __u32 pos = f->pos;
    if (pos < UPROF_BPF_TEXT_BYTES && max > 0 && max <= UPROF_BPF_MAX_STRING) {
      /* Masks restate the bounds just checked, in asm so that clang keeps them: a
       * verifier may lose a bound when clang reloads a value from the stack (6.1). */
      __u64 at = pos, cap = max;
      asm volatile("%0 &= 4095" : "+r"(at));
      asm volatile("%0 &= 2047" : "+r"(cap));
      if (got == 3)
        rc = bpf_probe_read_kernel_str(&f->r->text[at], cap, comm);
      else if (sleepable)
        rc = bpf_copy_from_user_str(&f->r->text[at], cap, (void *)(long)v, 0);
      else
        rc = bpf_probe_read_user_str(&f->r->text[at], cap, (void *)(long)v);
    }
    if (rc > max) rc = max;
    if (rc > 0) {
      v = ((__u64)pos << 32) | (__u64)rc;
      f->pos = pos + (__u32)rc;
    } else {
      v = 0;
      got = 0;
    }
  }
  if (!got) f->missing |= 1u << (i & 31);
  f->r->v[i & (UPROF_BPF_MAX_SLOTS - 1)] = v;
  return 0;
}

/* bpf_loop's callbacks, one per kind of program. */
static long fill_text_slot_nosleep(__u32 i, void *data) { return fill_text_slot(i, data, false); }
static long fill_text_slot_sleep(__u32 i, void *data) { return fill_text_slot(i, data, true); }

/* record -g: the call stack, unwound in user space (drain/unwind/). A hit of a probe
 * that asks for it writes a STACK record just before its HIT record: the thread's
 * registers and the top of its user stack, as perf's --call-graph dwarf copies them. */
const volatile __u32 stack_bytes = 0;  /* user stack bytes a STACK record has room for */
const volatile __u32 regs_bytes = 0;   /* the probed arch's struct pt_regs: x86-64 168, arm64 272 */
const volatile __u32 sp_offset = 0;    /* the stack pointer's byte offset in it */
const volatile __u64 stack_min_ns = 0; /* --stack-min */

struct vm_area_struct {
  unsigned long vm_start;
  unsigned long vm_end;
} __attribute__((preserve_access_index));

/* --stack-min: per thread, the entry times of the probed calls it is in, by depth. */
struct call_starts {
  __u32 depth;
  __u32 pad;
  __u64 time[UPROF_BPF_CALL_DEPTH];
};

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct call_starts);
} call_starts SEC(".maps");

/* Processes that wrote a stack: the first one of each wakes the reader at once, which
 * reads the process's mappings while it still runs (a process that exits before they
 * are read has stacks of their pc alone). LRU: an evicted one only wakes it again. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 4096);
  __type(key, __u32);
  __type(value, __u8);
} stacked SEC(".maps");

static long stack_vma_end(struct task_struct *task, struct vm_area_struct *vma, void *data) {
  *(__u64 *)data = vma->vm_end;
  return 0;
}

/* The STACK record. The copy stops at the end of the stack's mapping (the main thread's
 * stack may end a few hundred bytes above main's frame): a read that crosses it would
 * fail whole. When the mapping cannot be looked up (its lock is taken), shorter copies
 * are tried. */
static __always_inline void emit_stack(void *ctx, __u32 probe, __u32 tgid, __u32 tid, __u64 time,
                                       const bool sleepable) {
  struct stack_rec {
    struct uprof_bpf_record h;
    __u8 regs[UPROF_BPF_REGS_BYTES];
    __u8 stack[];
  } *r = bpf_ringbuf_reserve(&events, sizeof(struct stack_rec) + stack_bytes, 0);
  if (!r) return; /* the hit then has no stack: user space sees no STACK record before it */
  fill_header(&r->h, UPROF_BPF_STACK, tgid, tid, time);
  r->h.probe = probe;
  __u32 nregs = regs_bytes;
  if (nregs > UPROF_BPF_REGS_BYTES) nregs = UPROF_BPF_REGS_BYTES;
  if (bpf_probe_read_kernel(r->regs, nregs, ctx)) __builtin_memset(r->regs, 0, sizeof r->regs);
  __u64 sp = 0;
  __u32 off = sp_offset;
  if (off <= UPROF_BPF_REGS_BYTES - 8) bpf_probe_read_kernel(&sp, 8, (void *)((long)ctx + off));
  __u64 end = 0;
  bpf_find_vma(bpf_get_current_task_btf(), sp, stack_vma_end, &end, 0);
  __u64 want = stack_bytes;
  if (end > sp && end - sp < want) want = end - sp;
  __u32 copied = 0;
  for (int i = 0; i < 4; i++) {
    if (want > stack_bytes) want = stack_bytes;
    if (want == 0) break;
    if (read_user(r->stack, want, (void *)(long)sp, sleepable) == 0) {
      copied = (__u32)want;
      break;
    }
    want = (want / 2) & ~7ull;
  }
  r->h.missing = copied;
  __u64 flags = submit_flags();
  if (!bpf_map_lookup_elem(&stacked, &tgid)) {
    __u8 one = 1;
    bpf_map_update_elem(&stacked, &tgid, &one, BPF_ANY);
    flags = BPF_RB_FORCE_WAKEUP;
  }
  bpf_ringbuf_submit(r, flags);
}

/* A hit's part in the call stack: a STACK record, an entry time noted, or, at a return,
 * a STACK record when the call was long enough (--stack-min). */
static __always_inline void stack_at_hit(void *ctx, const struct uprof_bpf_probe *p, __u32 tgid, __u32 tid,
                                         __u64 time, const bool sleepable) {
  __u32 mode = p->stack;
  if (mode == UPROF_BPF_STACK_NONE) return;
  if (mode == UPROF_BPF_STACK_ALWAYS) {
    emit_stack(ctx, p->probe, tgid, tid, time, sleepable);
    return;
  }
  struct call_starts *cs = bpf_task_storage_get(&call_starts, bpf_get_current_task_btf(), 0,
                                                mode == UPROF_BPF_STACK_ENTRY ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
  if (!cs) return;
  __u32 d = cs->depth;
  if (mode == UPROF_BPF_STACK_ENTRY) {
    if (d < UPROF_BPF_CALL_DEPTH) cs->time[d] = time;
    cs->depth = d + 1;
    return;
  }
  if (d == 0) return; /* a return whose entry came before the recording */
  cs->depth = --d;
  if (d < UPROF_BPF_CALL_DEPTH && time - cs->time[d] >= stack_min_ns) emit_stack(ctx, p->probe, tgid, tid, time, sleepable);
}

/* What both hit programs do first: drop hits of processes not followed, find the
 * probe by its cookie, count the hit. 0 when the hit is not recorded. */
struct hit_of {
  __u64 time;
  __u32 tgid, tid, n;
  struct uprof_bpf_probe *p;
  struct uprof_bpf_counts *c;
};

/* Whether the current process is recorded. */
static __always_inline int followed(__u32 tgid) {
  if (tgid == self_tgid) return 0;
  if (follow_all) return 1;
  struct uprof_bpf_task *t = bpf_map_lookup_elem(&tasks, &tgid);
  return t && t->active;
}

static __always_inline int begin_hit(struct pt_regs *ctx, struct hit_of *h, __u32 key) {
  if (!running) return 0;
  h->time = bpf_ktime_get_ns();
  __u64 id = bpf_get_current_pid_tgid();
  h->tgid = id >> 32;
  h->tid = (__u32)id;
  if (!followed(h->tgid)) return 0;
  h->p = bpf_map_lookup_elem(&probes, &key);
  h->c = bpf_map_lookup_elem(&counts, &key);
  if (!h->p || !h->c) return 0;
  h->c->hits++;
  h->n = h->p->nslots;
  if (h->n > UPROF_BPF_MAX_SLOTS) h->n = UPROF_BPF_MAX_SLOTS;
  return 1;
}

static __always_inline int hit_text(struct pt_regs *ctx, __u32 key, const bool sleepable) {
  struct hit_of h;
  if (!begin_hit(ctx, &h, key)) return 0;
  __u32 zero = 0, n = h.n, tgid = h.tgid, tid = h.tid;
  __u64 time = h.time;
  struct uprof_bpf_probe *p = h.p;
  struct uprof_bpf_counts *c = h.c;
  stack_at_hit(ctx, p, tgid, tid, time, sleepable);
  struct text_hit *r = sleepable ? bpf_task_storage_get(&scratch_task, bpf_get_current_task_btf(), 0,
                                                        BPF_LOCAL_STORAGE_GET_F_CREATE)
                                 : bpf_map_lookup_elem(&scratch, &zero);
  if (!r) { /* no memory for a thread's scratch: the hit counts as dropped */
    offcpu_dropped(p->offcpu);
    hit_dropped(c, tgid, tid, 0);
    return 0;
  }
  fill_header(&r->h, UPROF_BPF_HIT_TEXT, tgid, tid, time);
  r->h.probe = p->probe;
  r->h.nvalues = (__u8)n;
  struct text_fill f = {.ctx = ctx, .p = p, .r = r, .n = n, .pos = 0, .missing = 0};
  bpf_loop(UPROF_BPF_MAX_SLOTS, sleepable ? fill_text_slot_sleep : fill_text_slot_nosleep, &f, 0);
  r->h.missing = f.missing;
  if (offcpu_on && p->offcpu && !offcpu_put(r->v, UPROF_BPF_TEXT_SLOTS, n, p->offcpu)) {
    hit_dropped(c, tgid, tid, lost_carried(&r->h));
    return 0;
  }
  __u64 text = f.pos; /* at most UPROF_BPF_TEXT_BYTES + UPROF_BPF_MAX_STRING */
  asm volatile("%0 &= 8191" : "+r"(text));
  r->h.reserved |= (__u32)text;
  if (bpf_ringbuf_output(&events, r, sizeof(r->h) + sizeof(r->v) + text, submit_flags())) {
    /* offcpu_put moved the depth already */
    hit_dropped(c, tgid, tid, lost_carried(&r->h));
    return 0;
  }
  c->written++;
  return 0;
}

static __always_inline int hit_plain(struct pt_regs *ctx, __u32 key, const bool sleepable) {
  struct hit_of h;
  if (!begin_hit(ctx, &h, key)) return 0;
  __u32 n = h.n, tgid = h.tgid, tid = h.tid;
  __u64 time = h.time;
  struct uprof_bpf_probe *p = h.p;
  struct uprof_bpf_counts *c = h.c;
  stack_at_hit(ctx, p, tgid, tid, time, sleepable);
  /* The record's size class holds the values and, with --off-cpu, the totals after them. */
  const __u32 need = n + (offcpu_on && p->offcpu ? UPROF_BPF_OFFCPU_KINDS : 0);
  if (need <= 2) EMIT_HIT(2, sleepable);
  if (need <= 4) EMIT_HIT(4, sleepable);
  if (need <= 8) EMIT_HIT(8, sleepable);
  EMIT_HIT(38, sleepable); /* UPROF_BPF_TEXT_SLOTS */
}

/* The four kinds of hit, by what the program may do. */
static __always_inline int hit_plain_nosleep(struct pt_regs *ctx, __u32 key) { return hit_plain(ctx, key, false); }
static __always_inline int hit_plain_sleep(struct pt_regs *ctx, __u32 key) { return hit_plain(ctx, key, true); }
static __always_inline int hit_text_nosleep(struct pt_regs *ctx, __u32 key) { return hit_text(ctx, key, false); }
static __always_inline int hit_text_sleep(struct pt_regs *ctx, __u32 key) { return hit_text(ctx, key, true); }

/* The programs. Each finds its probe by the attach cookie (uprobe_links.h for the
 * multi-uprobe links' cookies). uprof_hit and uprof_hit_text run on uprobe-PMU perf
 * events; uprof_multi and uprof_multi_text on multi-uprobe links (Linux 6.6+: user
 * space sets their expected attach type, which libbpf 1.1 has no section name for);
 * uprof_session and uprof_session_text on uprobe sessions (Linux 6.13+). Programs the
 * kernel cannot run are not loaded. */
SEC("uprobe")
int uprof_hit(struct pt_regs *ctx) { return hit_plain_nosleep(ctx, (__u32)bpf_get_attach_cookie(ctx)); }

SEC("uprobe")
int uprof_hit_text(struct pt_regs *ctx) { return hit_text_nosleep(ctx, (__u32)bpf_get_attach_cookie(ctx)); }

SEC("uprobe")
int uprof_multi(struct pt_regs *ctx) { return hit_plain_nosleep(ctx, (__u32)bpf_get_attach_cookie(ctx)); }

SEC("uprobe")
int uprof_multi_text(struct pt_regs *ctx) { return hit_text_nosleep(ctx, (__u32)bpf_get_attach_cookie(ctx)); }

/* The sleepable twins ("uprobe.s": BPF_F_SLEEPABLE; the links' attach type is set by
 * user space as for the others). */
SEC("uprobe.s")
int uprof_hit_s(struct pt_regs *ctx) { return hit_plain_sleep(ctx, (__u32)bpf_get_attach_cookie(ctx)); }

SEC("uprobe.s")
int uprof_hit_text_s(struct pt_regs *ctx) { return hit_text_sleep(ctx, (__u32)bpf_get_attach_cookie(ctx)); }

SEC("uprobe.s")
int uprof_multi_s(struct pt_regs *ctx) { return hit_plain_sleep(ctx, (__u32)bpf_get_attach_cookie(ctx)); }

SEC("uprobe.s")
int uprof_multi_text_s(struct pt_regs *ctx) { return hit_text_sleep(ctx, (__u32)bpf_get_attach_cookie(ctx)); }

/* Weak: a kernel without sessions loads the object, with the session programs off. */
extern bool bpf_session_is_return(void) __ksym __weak;

/* A session's cookie: the entry probe's index + 1 in the low half, the return probe's
 * in the high half (0: none). At the entry, 1 declines the return: every process
 * uprof does not follow keeps its return addresses, and so do followed calls of a
 * function whose return is not probed. */
#define SESSION(HIT)                                                                  \
  __u64 cookie = bpf_get_attach_cookie(ctx);                                           \
  __u32 entry = (__u32)cookie, ret = (__u32)(cookie >> 32);                            \
  if (bpf_session_is_return()) {                                                       \
    if (ret) HIT(ctx, ret - 1);                                                        \
    return 0;                                                                          \
  }                                                                                    \
  if (!running || !followed(bpf_get_current_pid_tgid() >> 32)) return 1;              \
  if (entry) HIT(ctx, entry - 1);                                                      \
  return ret ? 0 : 1;

SEC("uprobe")
int uprof_session(struct pt_regs *ctx) { SESSION(hit_plain_nosleep) }

SEC("uprobe")
int uprof_session_text(struct pt_regs *ctx) { SESSION(hit_text_nosleep) }

SEC("uprobe.s")
int uprof_session_s(struct pt_regs *ctx) { SESSION(hit_plain_sleep) }

SEC("uprobe.s")
int uprof_session_text_s(struct pt_regs *ctx) { SESSION(hit_text_sleep) }

/* A task record the ring had no room for. */
static __always_inline void count_task_drop(void) {
  __u32 zero = 0;
  __u64 *d = bpf_map_lookup_elem(&task_drops, &zero);
  if (d) (*d)++;
}

static __always_inline void task_record(__u8 kind, __u32 pid, __u32 tid, __u64 v0, __u64 v1) {
  struct task_rec {
    struct uprof_bpf_record h;
    __u64 v[2];
  } *r = bpf_ringbuf_reserve(&events, sizeof(struct task_rec), 0);
  if (!r) {
    count_task_drop();
    return;
  }
  fill_header(&r->h, kind, pid, tid, bpf_ktime_get_ns());
  r->h.nvalues = 2;
  r->v[0] = v0;
  r->v[1] = v1;
  bpf_ringbuf_submit(r, submit_flags());
}

/* A followed process forked a thread or a child: follow it from its first instruction
 * (the tracepoint runs before the new task is woken). */
SEC("raw_tp/sched_process_fork")
int uprof_fork(struct bpf_raw_tracepoint_args *ctx) {
  struct task_struct *parent = (struct task_struct *)ctx->args[0];
  struct task_struct *child = (struct task_struct *)ctx->args[1];
  __u32 ptgid = BPF_CORE_READ(parent, tgid), ptid = BPF_CORE_READ(parent, pid);
  __u32 ctgid = BPF_CORE_READ(child, tgid), ctid = BPF_CORE_READ(child, pid);
  struct uprof_bpf_task *t = bpf_map_lookup_elem(&tasks, &ptgid);
  if (!t && !follow_all) return 0;
  if (t) {
    if (ctgid == ptgid) {
      __sync_fetch_and_add(&t->threads, 1);
    } else {
      struct uprof_bpf_task child_task = {.threads = 1, .active = t->active};
      bpf_map_update_elem(&tasks, &ctgid, &child_task, BPF_ANY);
    }
  }
  task_record(UPROF_BPF_FORK, ctgid, ctid, ptgid, ptid);
  return 0;
}

SEC("raw_tp/sched_process_exit")
int uprof_exit(struct bpf_raw_tracepoint_args *ctx) {
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32, tid = (__u32)id;
  struct uprof_bpf_task *t = bpf_map_lookup_elem(&tasks, &tgid);
  if (!t && !follow_all) return 0;
  if (t && __sync_fetch_and_add(&t->threads, -1) == 1) bpf_map_delete_elem(&tasks, &tgid);
  task_record(UPROF_BPF_EXIT, tgid, tid, 0, 0);
  return 0;
}

/* A launched workload is followed from its exec on, like perf's enable_on_exec. */
SEC("raw_tp/sched_process_exec")
int uprof_exec(struct bpf_raw_tracepoint_args *ctx) {
  __u32 tgid = bpf_get_current_pid_tgid() >> 32;
  struct uprof_bpf_task *t = bpf_map_lookup_elem(&tasks, &tgid);
  if (t) t->active = 1;
  return 0;
}

/* Exec, prctl(PR_SET_NAME) and writes to /proc/.../comm name a thread. */
SEC("raw_tp/task_rename")
int uprof_rename(struct bpf_raw_tracepoint_args *ctx) {
  struct task_struct *task = (struct task_struct *)ctx->args[0];
  const char *comm = (const char *)ctx->args[1];
  __u32 tgid = BPF_CORE_READ(task, tgid), tid = BPF_CORE_READ(task, pid);
  if (!follow_all && !bpf_map_lookup_elem(&tasks, &tgid)) return 0;
  struct comm_rec {
    struct uprof_bpf_record h;
    char comm[16];
  } *r = bpf_ringbuf_reserve(&events, sizeof(struct comm_rec), 0);
  if (!r) {
    count_task_drop();
    return 0;
  }
  fill_header(&r->h, UPROF_BPF_COMM, tgid, tid, bpf_ktime_get_ns());
  r->h.nvalues = 2;
  __builtin_memset(r->comm, 0, sizeof r->comm);
  bpf_probe_read_kernel_str(r->comm, sizeof r->comm, comm);
  bpf_ringbuf_submit(r, submit_flags());
  return 0;
}
