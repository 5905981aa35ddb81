#include "uprof/resolve/insn/probe_placement.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "uprof/util/hex.h"

namespace uprof {
namespace {

bool fast(InsnClass c) { return c == InsnClass::Emulated || c == InsnClass::Optimized; }

std::string reg_names(Arch arch, uint64_t mask) {
  std::string s;
  const ArchInfo& a = arch_info(arch);
  for (unsigned i = 0; i < 64; i++)
    if (mask & (1ull << i))
      if (const RegInfo* r = find_reg_by_perf_index(a, i)) s += (s.empty() ? "%" : ", %") + std::string(r->name);
  return s;
}

constexpr std::size_t kMaxTableEntries = 4096;

// The targets of the function's jump tables that can be seen (x86-64): a table of int32
// offsets from an address the function takes with `lea X(%rip)` (gcc and clang, PIC),
// or of 8-byte addresses that `jmp *X(,%reg,8)` indexes (non-PIC); entries are read
// while they land inside the function. nullopt when the function jumps indirectly and
// no table is seen.
std::optional<std::set<uint64_t>> jump_table_targets(const std::vector<DecodedInsn>& insns, const PlacementInput& in) {
  bool indirect = false;
  std::set<uint64_t> targets;
  bool tables = false;
  const uint64_t lo = in.function_vaddr, hi = in.function_vaddr + in.code.size();
  auto inside = [&](uint64_t a) { return a >= lo && a < hi; };
  for (const auto& insn : insns) indirect |= insn.indirect_jump;
  if (!indirect) return targets;
  if (!in.read) return std::nullopt;
  for (const auto& insn : insns) {
    if (insn.absolute_table) {
      tables = true;
      for (std::size_t i = 0; i < kMaxTableEntries; i++) {
        auto b = in.read(*insn.absolute_table + 8 * i, 8);
        if (!b || b->size() != 8) break;
        uint64_t t;
        std::memcpy(&t, b->data(), 8);
        if (!inside(t)) break;
        targets.insert(t);
      }
    } else if (insn.rip_address && !inside(*insn.rip_address)) {
      const uint64_t base = *insn.rip_address;
      for (std::size_t i = 0; i < kMaxTableEntries; i++) {
        auto b = in.read(base + 4 * i, 4);
        if (!b || b->size() != 4) break;
        int32_t e;
        std::memcpy(&e, b->data(), 4);
        uint64_t t = base + static_cast<uint64_t>(static_cast<int64_t>(e));
        if (!inside(t)) break;
        tables = true;
        targets.insert(t);
      }
    }
  }
  if (!tables) return std::nullopt;
  return targets;
}

// Why nothing may land in the stretch (+0, +site] the probe no longer covers; "" when
// nothing can.
std::string stretch_blocker(const InsnDecoder& decoder, const PlacementInput& in, std::size_t site) {
  const uint64_t lo = in.function_vaddr, hi = in.function_vaddr + site;
  if (in.branch_targets_in && in.branch_targets_in(lo, hi))
    return "a branch of the file targets an instruction in (+0, +" + hex(site) + "]";
  std::vector<DecodedInsn> insns;
  decoder.each(in.code, in.function_vaddr, [&](const DecodedInsn& i) { insns.push_back(i); });
  auto tables = jump_table_targets(insns, in);
  if (!tables) return "it jumps through a register or memory, and no jump table of it can be read";
  for (uint64_t t : *tables)
    if (t > lo && t <= hi) return "its jump table targets +" + hex(t - lo);
  return "";
}

}  // namespace

Placement place_entry(const InsnDecoder& decoder, const PlacementInput& in) {
  const Arch arch = decoder.arch();
  Placement out;
  out.at_symbol = classify_insn(arch, in.code, in.function_file_offset);
  out.at_site = out.at_symbol;
  if (fast(out.at_symbol.cls)) return out;
  auto keep = [&](std::string why) {
    out.kept_because = std::move(why);
    return out;
  };
  // A refused first instruction is no site at all: the first instruction the kernel
  // probes (but a return, where the calls would take no time) will do when no emulated
  // one is in reach, and what the skipped instructions write to memory matters only to
  // a probe that reads memory.
  const bool refused = out.at_symbol.cls == InsnClass::Rejected;
  struct Candidate {
    std::size_t at;
    InsnInfo info;
    std::string skipped;
  };
  std::optional<Candidate> fast_site, fallback;
  std::string blocked;

  // A return probe replaces the return address where the entry holds it: in arm64's
  // x30, which the skipped instructions must then leave alone (x86-64 has it on the stack).
  const ArchInfo& info = arch_info(arch);
  const uint64_t lr_bit = in.has_return_probe && info.link_reg >= 0 ? 1ull << info.link_reg : 0;
  std::string skipped;
  std::size_t at = 0;
  for (std::size_t n = 0; n <= kMaxSkipped && at < in.code.size(); n++) {
    auto insn = decoder.decode(in.code.subspan(at), in.function_vaddr + at);
    if (!insn) {
      blocked = "+" + hex(at) + " does not decode";
      break;
    }
    InsnInfo here = classify_insn(arch, in.code.subspan(at), in.function_file_offset + at);
    if (at > 0 && fast(here.cls)) {
      fast_site = Candidate{at, here, skipped};
      break;
    }
    if (at > 0 && refused && !fallback && here.cls != InsnClass::Rejected && !insn->is_return)
      fallback = Candidate{at, here, skipped};
    const std::string what = "+" + hex(at) + " " + insn->text;
    if (n == kMaxSkipped || at + insn->length > kWindowBytes)
      blocked = "no emulated or optimized instruction within " + std::to_string(kMaxSkipped) + " instructions";
    else if (here.keeps_site)
      blocked = what + " must not be separated from what follows it (" + here.why + ")";
    else if (insn->changes_flow)
      blocked = what + " changes control flow";
    else if (decoder.writes_sp(*insn))
      blocked = what + " writes the stack pointer";
    else if (insn->writes_memory && (!refused || in.reads_memory))
      blocked = what + " writes memory";
    else if (uint64_t w = insn->regs_written & in.regs_read)
      blocked = what + " writes " + reg_names(arch, w) + ", which the probe reads";
    else if (insn->regs_written & lr_bit)
      blocked = what + " writes %" + std::string(find_reg_by_perf_index(info, info.link_reg)->name) +
                ", the return address that the return probe replaces";
    if (!blocked.empty()) break;
    skipped += (skipped.empty() ? "" : "; ") + insn->text;
    at += insn->length;
  }
  if (!fast_site && !fallback && blocked.empty())
    blocked = "no emulated or optimized instruction within the function";

  // The emulated site if nothing lands in the stretch it skips, else the nearer fallback.
  for (const auto* c : {&fast_site, &fallback}) {
    if (!*c) continue;
    std::string why = stretch_blocker(decoder, in, (*c)->at);
    if (!why.empty()) {
      blocked = why;
      continue;
    }
    out.offset = (*c)->at;
    out.at_site = (*c)->info;
    out.skipped = (*c)->skipped;
    return out;
  }
  return keep(blocked);
}

std::string describe_move(const Placement& p) {
  if (!p.moved()) return "";
  const std::string cls = p.at_symbol.cls == InsnClass::Rejected ? "refused: " + p.at_symbol.why
                                                                   : std::string(to_string(p.at_symbol.cls));
  return p.skipped + " (" + cls + ") -> +" + hex(p.offset);
}

Status check_boundary(const InsnDecoder& decoder, std::span<const uint8_t> code, uint64_t offset,
                      const std::string& function) {
  if (arch_info(decoder.arch()).fixed_insn_size) return ok();  // fixed width: the alignment check covers it
  uint64_t at = 0;
  while (at < code.size()) {
    auto insn = decoder.decode(code.subspan(at), at);
    if (!insn) break;
    if (at == offset) return ok();
    if (offset > at && offset < at + insn->length)
      return err(function, "+", hex(offset), " is inside the instruction at ", function, "+", hex(at), " (",
                 insn->text, ", ", int(insn->length), " bytes): the nearest boundaries are ", function, "+", hex(at),
                 " and ", function, "+", hex(at + insn->length), "; --force probes it as given");
    at += insn->length;
    if (at > offset) break;
  }
  if (offset < at) return ok();
  return err(function, "+", hex(offset), ": the instructions of ", function, " cannot be decoded up to it (they stop at +",
             hex(at), "); --force probes it as given");
}

}  // namespace uprof
