#include "uprof/record/site_placement.h"

#include "uprof/record/value_binding.h"
#include "uprof/resolve/elf/offset.h"
#include "uprof/resolve/insn/go_prologue.h"
#include "uprof/resolve/insn/probe_placement.h"
#include "uprof/resolve/insn/site_refusal.h"
#include "uprof/util/hex.h"

namespace uprof {
namespace {

// What the entry probe's values read: registers (a stack value reads the stack pointer)
// and whether any is read from memory.
struct EntryReads {
  uint64_t regs = 0;
  bool memory = false;
};

EntryReads entry_reads(const ResolvedProbe& p, const PlanOptions& plan) {
  if (p.is_return() || plan.return_only) return {};
  const ArchInfo& arch = arch_info(p.arch);
  std::vector<ValueSpec> specs = p.typed_entry;
  for (const auto& v : p.values) {
    auto b = bind_value(v, arch);
    if (b.ok() && *b && !(*b)->for_return) specs.push_back((*b)->spec);
  }
  ProbeReads r = reads_for(specs, arch);
  EntryReads out{.regs = r.regs_mask, .memory = r.stack_bytes > 0};
  if (r.stack_bytes) out.regs |= 1ull << arch.sp_reg;
  // A value read from memory at the probe (a string) starts from a register too, which
  // reads_for leaves out (the engine reads it, the sample need not carry it).
  for (const auto& v : specs) {
    if (!fetched_from_memory(v)) continue;
    out.memory = true;
    if (v.source == ValueSource::Register) out.regs |= 1ull << v.reg;
    if (v.source == ValueSource::Stack) out.regs |= 1ull << arch.sp_reg;
  }
  return out;
}

}  // namespace

Status place_sites(Resolver& resolver, std::vector<ResolvedProbe>& probes, const PlanOptions& plan,
                   const ReturnRisks& risks, std::vector<SiteMove>& moves, std::vector<std::string>& notes,
                   std::vector<Placement>* placements) {
  if (placements) placements->assign(probes.size(), Placement{});
  // Every spec naming a function is placed together: one site for all of them, which
  // keeps the values of all (their registers together) and their return probes one.
  std::vector<bool> done(probes.size(), false);
  for (std::size_t i = 0; i < probes.size(); i++) {
    const ResolvedProbe& first = probes[i];
    // A source line or an inlined copy stays where DWARF puts it: a byte further may be
    // another line's code.
    if (done[i] || !first.at_function_entry() || first.function_size == 0) continue;
    std::vector<std::size_t> group;
    for (std::size_t j = i; j < probes.size(); j++)
      if (!done[j] && probes[j].path == first.path && probes[j].function_addr == first.function_addr &&
          probes[j].at_function_entry()) {
        group.push_back(j);
        done[j] = true;
      }
    UPROF_ASSIGN(const Image* img, resolver.image(first.path));
    UPROF_ASSIGN(const InsnDecoder* decoder, resolver.decoder(first.arch));
    UPROF_ASSIGN(std::vector<uint8_t> code, resolver.function_bytes(*img, first.function_addr, first.function_size));
    // A Go function's entry probe goes past its stack-growth check, which restarts the
    // function on a grown stack: before it, one call would be two entries.
    if (const ReturnRisk* risk = risks.of(first); risk && risk->hazard == ReturnHazard::GoCode)
      if (auto check = go_stack_check(*decoder, code, first.function_addr)) {
        Placement where{.offset = check->end,
                        .at_symbol = classify_insn(first.arch, code, first.file_offset),
                        .at_site = classify_insn(first.arch, std::span<const uint8_t>(code).subspan(check->end),
                                                 first.file_offset + check->end),
                        .skipped = "Go's stack-growth check " + check->text,
                        .kept_because = {}};
        for (std::size_t j : group) {
          if (placements) (*placements)[j] = where;
          probes[j].vaddr += where.offset;
          probes[j].file_offset += where.offset;
        }
        moves.push_back({.path = first.path, .file_offset = first.file_offset, .from = describe_move(where)});
        continue;
      }
    PlacementInput in;
    in.function_vaddr = first.function_addr;
    in.function_file_offset = first.file_offset;
    in.code = code;
    for (std::size_t j : group) {
      const EntryReads reads = entry_reads(probes[j], plan);
      in.regs_read |= reads.regs;
      in.reads_memory |= reads.memory;
      in.has_return_probe |= (probes[j].is_return() || !plan.entry_only) &&
                             risks.return_probe_allowed(probes[j], plan.unsafe_returns);
    }
    in.branch_targets_in = [&](uint64_t lo, uint64_t hi) {
      auto t = resolver.branch_targets(*img);
      return !t.ok() || (*t)->any_in(lo, hi);  // unreadable: assume the worst
    };
    in.read = [&](uint64_t vaddr, std::size_t n) -> std::optional<std::vector<uint8_t>> {
      auto off = vaddr_to_offset(img->elf.loads(), vaddr);
      if (!off) return std::nullopt;
      auto b = img->elf.read_bytes(*off, n);
      if (!b.ok()) return std::nullopt;
      return std::move(b).value();
    };
    Placement where = place_entry(*decoder, in);
    for (std::size_t j : group) {
      if (placements) (*placements)[j] = where;
      if (!where.moved()) continue;
      probes[j].vaddr += where.offset;
      probes[j].file_offset += where.offset;
    }
    if (!where.moved()) continue;
    moves.push_back({.path = first.path, .file_offset = first.file_offset,  // moved above
                     .from = describe_move(where)});
    if (where.at_symbol.cls != InsnClass::Rejected) continue;
    auto refused = site_refusal(first.arch, first.path, first.function, 0, first.file_offset - where.offset, code);
    if (refused)
      notes.push_back(refusal_line(*refused) + "; probed at +" + hex(where.offset) + " instead, past " + where.skipped);
  }
  return ok();
}

}  // namespace uprof
