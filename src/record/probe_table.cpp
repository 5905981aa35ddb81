#include "uprof/record/probe_table.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "uprof/model/probe_label.h"
#include "uprof/model/usdt_pair.h"
#include "uprof/record/value_binding.h"

namespace uprof {
namespace {

// What the engines read at `p`: its values, then Go's g register for a goroutine probe,
// and the stack pointer last for a frame probe.
ProbeCapture capture_for(const ProbeInfo& p, const ArchInfo& arch, uint64_t ref_ctr_offset) {
  ProbeCapture c{.probe = p.index, .path = p.path, .file_offset = p.file_offset, .is_return = p.kind == ProbeKind::Return,
                 .reads = {}, .values = p.values, .frame = p.frame, .tail_call = p.tail_call,
                 .goroutine = p.goroutine, .ref_ctr_offset = ref_ctr_offset, .label = p.function, .kind = p.kind};
  if (p.goroutine)
    c.values.push_back(ValueSpec{.name = "$g", .source = ValueSource::Register, .reg = arch.go_g_reg, .hex = true});
  if (p.frame)
    c.values.push_back(ValueSpec{.name = "$sp", .source = ValueSource::Register, .reg = arch.sp_reg, .hex = true});
  c.reads = reads_for(c.values, arch);
  return c;
}

// What `p` (made from `r`) does in which report row, as the data file records it
// (format 1.6; model/recording.h RowRole): `-e add` -> Entry and Return (or Exit) of row
// "add"; `-e add+0x10` -> Instruction, "add+0x10"; usdt:python:gc__start -> UsdtStart of
// "python:gc"; an inlined copy of sq -> Inlined, "sq"; lines.c:23 -> Line, "lines.c:23".
void place_in_row(ProbeInfo& p, const ResolvedProbe& r) {
  if (r.is_usdt()) {
    const auto half = usdt_pair_half(r.function);
    p.role = !half ? RowRole::Usdt : half->second ? RowRole::UsdtDone : RowRole::UsdtStart;
    p.row = half ? half->first : r.function;
  } else if (r.is_site()) {
    p.role = r.as<InlinedSite>() ? RowRole::Inlined : RowRole::Line;
    p.row = r.function;
  } else if (p.kind == ProbeKind::Exit) {
    p.role = RowRole::Exit;
    p.row = r.function;
  } else {
    // A raw offset outside every function is named with its file: "./app:0x1139".
    const std::string label = probe_label(r.function, r.offset_in_function, r.file_offset);
    p.role = p.kind == ProbeKind::Return ? RowRole::Return : r.offset_in_function ? RowRole::Instruction : RowRole::Entry;
    p.row = r.function.empty() ? r.path + ":" + label : label;
  }
}

}  // namespace

std::vector<unsigned> usdt_pair_key_args(const std::string& function, const std::vector<unsigned>& pair_by) {
  if (!pair_by.empty()) return pair_by;
  if (function == "python:function__entry" || function == "python:function__return") return {1, 2};
  return {};
}

Result<std::vector<unsigned>> parse_pair_by(const std::string& text) {
  std::vector<unsigned> keys;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    std::string item = text.substr(at, comma - at);
    if (item.rfind('$', 0) == 0) item.erase(0, 1);
    if (item.rfind("arg", 0) == 0) item.erase(0, 3);
    const bool digits = !item.empty() && item.size() <= 2 &&
                        std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
    const unsigned n = digits ? static_cast<unsigned>(std::stoul(item)) : 0;
    if (n < 1 || n > 12)
      return err("--pair-by '", text, "': '", text.substr(at, comma - at),
                 "' is not an argument: give arg1 to arg12, comma-separated (e.g. arg1,arg2)");
    if (std::find(keys.begin(), keys.end(), n) == keys.end()) keys.push_back(n);
    at = comma + 1;
  }
  return keys;
}

namespace {

// A probe's values bound to its architecture: the typed (DWARF) ones first, then the raw
// ones in the spec's order, split between the entry and the return probe; and which entry
// slots key a USDT pair (ProbeInfo::pair_key).
struct BoundValues {
  std::vector<ValueSpec> entry, ret;
  uint32_t pair_key = 0;
};

Result<BoundValues> bind_values(const ResolvedProbe& r, const ArchInfo& arch, const PlanOptions& opts) {
  BoundValues out{.entry = r.typed_entry, .ret = {}, .pair_key = 0};
  for (auto& v : out.entry)
    if (v.is_string() && v.string_max == 0) v.string_max = opts.string_max;
  const UsdtPoint* usdt = r.as<UsdtPoint>();
  const std::vector<unsigned> key_args = usdt ? usdt_pair_key_args(r.function, opts.pair_by) : std::vector<unsigned>{};
  for (const auto& value : r.values) {
    std::optional<BoundValue> v;
    if (std::holds_alternative<GlobalRef>(value.target)) {
      if (r.is_return())
        return err("spec: '", r.spec, "': value '", value.text, "': a global is read at an entry or an instruction, "
                   "not at a return probe (there the instruction pointer is the caller's): drop %return to read "
                   "it at the entry");
      UPROF_ASSIGN(v, bind_global(value, arch, r.vaddr, opts.string_max));
    } else {
      UPROF_ASSIGN(v, usdt ? bind_usdt_value(value, usdt->args, r.function, arch, opts.string_max)
                           : bind_value(value, arch, opts.string_max));
    }
    if (!v) continue;
    if (const auto* a = std::get_if<ArgumentRef>(&value.target);
        a && std::find(key_args.begin(), key_args.end(), a->n) != key_args.end() && out.entry.size() < 32)
      out.pair_key |= uint32_t{1} << out.entry.size();
    // On `add%return` every value is read at the return: `add%return %lr $retval`.
    if (v->for_return || r.is_return()) out.ret.push_back(v->spec);
    else out.entry.push_back(v->spec);
  }
  return out;
}

// Which probes a resolved probe becomes: its entry, its return (a return probe, or probes
// at its exit instructions when an exception may unwind through it), or an error saying
// why a value asked for has no probe to be read at.
struct ProbeRoles {
  bool at_entry = false, want_entry = false, want_return = false, at_exits = false;
};

Result<ProbeRoles> decide_roles(const ResolvedProbe& r, const ReturnRisk* risk, const PlanOptions& opts,
                                BoundValues& values) {
  ProbeRoles out;
  // A probe inside a function has no return of its own. A raw offset outside every
  // symbol is a function entry only when the spec says so: BIN:0xOFF%return.
  // A USDT probe is a point in the code, with no return.
  // A source line or an inlined copy is a point too, even at a function's first byte.
  out.at_entry = r.as<FunctionPoint>() && r.offset_in_function == 0 && (!r.function.empty() || r.is_return());
  out.want_entry = !r.is_return() && !opts.return_only;
  out.want_return = out.at_entry && (r.is_return() || !opts.entry_only);
  // A function whose return probe could change the program is measured at its own
  // exits, or, when they cannot all be seen (or it has none), not at all
  // (record/unwind_risk.h).
  const bool risky = risk && !(opts.unsafe_returns && risk->overridable());
  out.at_exits = risky && !risk->exits.empty();
  const std::string override = risk && risk->overridable() ? "; --unsafe-returns probes it anyway" : "";
  std::string blocked;
  if (risky && !out.at_exits)
    blocked = risk->overridable() || risk->hazard == ReturnHazard::GoCode
                  ? risk->why(r.function) + ", and its exits cannot all be probed: " + risk->exits_blocker
                  : risk->why(r.function);
  if (!blocked.empty() && r.is_return()) return err("spec: '", r.spec, "': ", blocked, override);
  if (!blocked.empty() && !r.typed_return_implicit)
    return err("spec: '", r.spec, "': $retval needs a return probe, and ", blocked, override);
  if (!blocked.empty()) out.want_return = false;
  if (!r.typed_return.empty() && (out.want_return || !r.typed_return_implicit)) {
    values.ret.insert(values.ret.begin(), r.typed_return.begin(), r.typed_return.end());
    for (auto& v : values.ret)
      if (v.is_string() && v.string_max == 0) v.string_max = opts.string_max;
  }
  if (values.entry.size() > kMaxValues || values.ret.size() > kMaxValues)
    return err("spec: '", r.spec, "': at most ", kMaxValues, " value slots per probe (",
               std::max(values.entry.size(), values.ret.size()),
               " asked for; a struct takes one per 8 bytes): name fewer values");
  // Parameters asked for on a return probe alone are not captured (they are
  // entry values); default capture on `add%return` keeps just the return value.
  if (!out.want_entry && !r.typed_entry.empty())
    values.entry.erase(values.entry.begin(), values.entry.begin() + static_cast<std::ptrdiff_t>(r.typed_entry.size()));
  if (r.is_return() && !out.at_entry) return err("spec: '", r.spec, "': a return probe needs a function entry");
  if (!out.want_entry && !values.entry.empty())
    return err("spec: '", r.spec, "': values ", r.values.front().text, "... need an entry probe, and there is none");
  if (!out.want_return && !values.ret.empty())
    return err("spec: '", r.spec, "': $retval needs a return probe, and ",
               !blocked.empty()       ? blocked + override
               : out.at_entry         ? "--entry-only removed it"
               : r.is_usdt()          ? "a USDT probe has none"
               : r.is_site()          ? "a source line or an inlined copy has none"
               : r.function.empty()   ? "a raw offset outside every symbol has none (BIN:0xOFF%return asks for one)"
                                      : "a probe inside a function has none");
  return out;
}

}  // namespace

Result<ProbeTable> plan_probes(const std::vector<ResolvedProbe>& resolved, const PlanOptions& opts,
                               const ReturnRisks& risks) {
  ProbeTable plan;
  // A site probed twice for one report row is one probe; two rows at one address (`-e sq
  // -e lines.c:12`, where sq's inlined copy starts that line) are two, each counting every
  // hit, as perf's two probes at one address would: the kernel breaks there once for both.
  std::map<std::tuple<std::string, uint64_t, ProbeKind, std::string>, std::size_t> seen;  // -> index in plan.probes
  std::set<std::pair<std::string, std::string>> said;  // (earlier spec, later spec) merged and noted
  for (const auto& r : resolved) {
    const ReturnRisk* risk = risks.of(r);
    // A Go function's $argN are Go's ABIInternal registers (rax rbx rcx ... on x86-64),
    // and r14 (arm64 x28) holds its goroutine's g. Not in an assembly function's ABI0
    // (the symbol ends in .abi0: runtime.morestack.abi0), which passes arguments on the
    // stack and may use r14 as it likes: it pairs by thread and stack pointer.
    const bool go_abi = risk && risk->hazard == ReturnHazard::GoCode && !r.symbol.ends_with(".abi0");
    const ArchInfo& arch = go_abi ? go_abi_info(r.arch) : arch_info(r.arch);
    UPROF_ASSIGN(BoundValues bound, bind_values(r, arch, opts));
    UPROF_ASSIGN(const ProbeRoles roles, decide_roles(r, risk, opts, bound));
    if (!roles.want_entry && !roles.want_return) continue;
    const bool at_exits = roles.at_exits;
    // A Go function's entry and exits carry the goroutine, whose frames they pair in.
    const bool goroutine = at_exits && go_abi;
    // ... and its entry reads the goroutine's id from g, for report --by-goroutine.
    if (goroutine && roles.want_entry && risk->goid_offset && bound.entry.size() < kMaxValues) {
      ValueSpec goid{.name = std::string(kGoroutineIdValue), .source = ValueSource::Register, .reg = arch.go_g_reg,
                     .size = 8, .is_signed = true};
      goid.deref = true;
      goid.deref_offset = static_cast<int32_t>(*risk->goid_offset);
      bound.entry.push_back(std::move(goid));
    }
    const UsdtPoint* usdt = r.as<UsdtPoint>();
    const uint32_t pair_key = bound.pair_key;

    // Where a probe of `kind` goes: the (placed) entry site, or an exit instruction.
    struct Site {
      uint64_t vaddr, file_offset, offset_in_function;
      bool tail_call = false;
    };
    const Site entry_site{r.vaddr, r.file_offset, r.offset_in_function};
    auto add = [&](ProbeKind kind, std::vector<ValueSpec> values, const Site& site) -> Status {
      auto [at, fresh] = seen.emplace(std::make_tuple(r.path, site.file_offset, kind, r.function), plan.probes.size());
      if (!fresh) {
        // Probed already by an earlier spec: its values gain the ones not there
        // yet (`-e 'add %di' -e 'add%return %lr'`), and the user hears of the shared row.
        ProbeInfo& p = plan.probes[at->second];
        if (said.insert({p.spec, r.spec}).second)
          plan.notes.push_back("'" + r.spec + "' probes what '" + p.spec + "' probes already (" + r.function +
                               "): one row in the report, with the values of both");
        std::vector<ValueSpec> merged = p.values;
        for (auto& v : values)
          if (std::none_of(p.values.begin(), p.values.end(), [&](auto& w) { return w.name == v.name; }))
            merged.push_back(std::move(v));
        if (merged.size() > kMaxValues)
          return err("spec: '", r.spec, "': with the values of '", p.spec, "' on the same probe, more than ",
                     kMaxValues, " value slots");
        p.values = std::move(merged);
        p.frame |= at_exits;
        p.goroutine |= goroutine;
        plan.capture.probes[at->second] = capture_for(p, arch, plan.capture.probes[at->second].ref_ctr_offset);
        return ok();
      }
      ProbeInfo p{.index = static_cast<uint32_t>(plan.probes.size()), .kind = kind, .spec = r.spec,
                  .path = r.path, .build_id = r.build_id, .function = r.function, .symbol = r.symbol,
                  .file_offset = site.file_offset, .vaddr = site.vaddr, .offset_in_function = site.offset_in_function,
                  .values = std::move(values), .frame = at_exits, .tail_call = site.tail_call,
                  .goroutine = goroutine, .usdt = r.is_usdt(), .pair_key = r.is_usdt() ? pair_key : 0, .site = r.is_site()};
      place_in_row(p, r);
      plan.capture.arch = r.arch;
      plan.capture.probes.push_back(
          capture_for(p, arch, kind == ProbeKind::Entry && usdt ? usdt->semaphore_offset : 0));
      plan.probes.push_back(std::move(p));
      return ok();
    };
    if (roles.want_entry) UPROF_TRY(add(ProbeKind::Entry, std::move(bound.entry), entry_site));
    if (roles.want_return && !at_exits) UPROF_TRY(add(ProbeKind::Return, std::move(bound.ret), entry_site));
    if (roles.want_return && at_exits) {
      // The exit instructions are in the function's own file and segment (a split-off
      // part too); the entry site may have moved off the symbol (record/site_placement.h).
      // An exit in a part below the symbol is labelled with the function alone.
      for (const ExitSite& x : risk->exits) {
        const Site site{x.vaddr, r.file_offset - r.vaddr + x.vaddr,
                        x.vaddr >= r.function_addr ? x.vaddr - r.function_addr : 0, x.tail_call};
        UPROF_TRY(add(ProbeKind::Exit, bound.ret, site));
      }
    }
  }
  if (plan.probes.empty()) return err("record: nothing to probe (--entry-only and --return-only together?)");
  return plan;
}

}  // namespace uprof
