// What a probe hit costs on the running kernel, per capture engine and class of first
// instruction, as `uprof bench` measured it; cached per kernel so that `uprof record`
// can store the figures of the engine it records with in the data file
// (RecordingMeta::probe_costs_ns, probe_hit_costs_ns) for free.
//
// Cache: $XDG_CACHE_HOME/uprof/probe-cost-<uname -r> when XDG_CACHE_HOME is set,
// else /var/cache/uprof/... for root and ~/.cache/uprof/... for others. A file holds
// the boot id it was measured under: a figure from another boot is not used (the
// same release may run on other hardware, or with other mitigations, after a reboot).
//
//   uprof-probe-cost 1
//   kernel 6.18.0-1-amd64
//   boot_id 3f0c2d6e-...
//   arch x86_64
//   unprobed_ns 1.6
//   class bpf single-stepped lea entry_ns 2950 return_ns 1800 call_ns 4800 inside_ns 2100
//   class perf emulated push%20%rbp entry_ns 520 ...
//
// A class line without an engine ("class emulated push%20%rbp ...") is from a uprof
// that measured the perf engine only: it is read as the perf engine's. (Such a uprof
// reads "class bpf ..." as damage and measures again: the cache is an optimisation.)
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/engine/engine_kind.h"
#include "uprof/resolve/insn/insn_class.h"
#include "uprof/util/result.h"

namespace uprof {

struct ClassCost {
  bool measured = false;
  std::string insn;          // the target's first instruction: "push %rbp"
  double entry_ns = 0;       // added per hit, entry probe only ($arg1 $arg2 sampled)
  double return_ns = 0;      // added per hit, return probe only ($retval)
  double call_ns = 0;        // added per call, entry + return probes (2 hits)
  // What the probes add to the duration uprof measures for a call: the median
  // duration recorded for a function that does nothing. --compensate subtracts it.
  uint64_t inside_ns = 0;
};

// One engine's figures, per class.
struct EngineCosts {
  std::array<ClassCost, 3> classes{};  // indexed by InsnClass (SingleStepped, Emulated, Optimized)

  ClassCost& of(InsnClass c) { return classes[static_cast<std::size_t>(c)]; }
  const ClassCost* find(InsnClass c) const {
    auto i = static_cast<std::size_t>(c);
    return i < classes.size() && classes[i].measured ? &classes[i] : nullptr;
  }
  bool any() const {
    for (const auto& c : classes)
      if (c.measured) return true;
    return false;
  }
};

struct ProbeCostTable {
  std::string kernel;        // uname -r
  std::string boot_id;       // /proc/sys/kernel/random/boot_id
  Arch arch = Arch::X86_64;
  double unprobed_ns = 0;    // one call of a target, no probe (the same for both engines)
  std::array<EngineCosts, kEngineKinds> engines{};  // indexed by EngineKind (Bpf, Perf)

  EngineCosts& engine(EngineKind e) { return engines[static_cast<std::size_t>(e)]; }
  const EngineCosts& engine(EngineKind e) const { return engines[static_cast<std::size_t>(e)]; }
  ClassCost& of(EngineKind e, InsnClass c) { return engine(e).of(c); }
  const ClassCost* find(EngineKind e, InsnClass c) const { return engine(e).find(c); }
};

std::string to_text(const ProbeCostTable& t);
Result<ProbeCostTable> parse_probe_costs(std::string_view text);

// The cache file's path for `kernel`, from the environment's values (pure).
std::string probe_cost_cache_path(std::string_view kernel, const char* xdg_cache_home, const char* home, bool root);
// The same for the running kernel and this process's environment.
std::string probe_cost_cache_path();
// Where a cached table is read from, in order: this process's own cache, then the
// system's (/var/cache/uprof, which root's `uprof bench` writes) when that is another
// file and XDG_CACHE_HOME does not choose one: a user's `bench --show` and `record` see
// what root measured (pure).
std::vector<std::string> probe_cost_read_paths(std::string_view kernel, const char* xdg_cache_home, const char* home,
                                               bool root);

// The running kernel's release and boot id.
struct KernelIdentity {
  std::string release;
  std::string boot_id;
};
KernelIdentity current_kernel();

// The cached table for the running kernel and boot, from the first of
// probe_cost_read_paths that has one (its path in `from`); nullopt when there is none
// (or it is from another boot, or unreadable: the cache is an optimisation).
std::optional<ProbeCostTable> load_cached_probe_costs(std::string* from = nullptr);
Status save_probe_costs(const ProbeCostTable& t, const std::string& path);

// The measurable classes among `needed` that `t` has no figures for with `engine`
// (every measurable one when there is no table), each once, in InsnClass order (pure).
std::vector<InsnClass> unmeasured_classes(const ProbeCostTable* t, EngineKind engine,
                                          std::span<const InsnClass> needed);

// Puts `fresh`'s measured classes, engine by engine, into `into`, replacing the same
// engine's same classes and keeping the others, so that a quick measurement of one
// class at record time (or `uprof bench --engine perf`) adds to what was measured
// before. `into` takes fresh's kernel, boot and arch, and its unprobed figure when it
// has one (pure).
void merge_probe_costs(ProbeCostTable& into, const ProbeCostTable& fresh);

// The table `uprof bench` prints: a row per class and engine, the engines of a class
// side by side; `only` shows one engine's rows.
std::string render_probe_costs(const ProbeCostTable& t, std::optional<EngineKind> only = std::nullopt);

}  // namespace uprof
