#include "uprof/resolve/insn/exit_sites.h"

#include "uprof/resolve/insn/insn_class.h"
#include "uprof/util/hex.h"

namespace uprof {

ExitScan find_exit_sites(const InsnDecoder& decoder, std::span<const CodePart> known, const ExitRules& rules) {
  ExitScan scan;
  std::vector<CodePart> parts(known.begin(), known.end());  // grows as split-off parts are found
  auto part_of = [&](uint64_t a) -> std::optional<std::size_t> {
    for (std::size_t n = 0; n < parts.size(); n++)
      if (a >= parts[n].vaddr && a < parts[n].vaddr + parts[n].code.size()) return n;
    return std::nullopt;
  };
  for (std::size_t n = 0; n < parts.size() && scan.blocker.empty(); n++) {
    const uint64_t base = parts[n].vaddr;
    const std::string where = n == 0 ? "+" : "part " + std::to_string(n) + " +";
    std::size_t decoded = decoder.each(parts[n].code, base, [&](const DecodedInsn& i) {
      if (!scan.blocker.empty()) return;
      const uint64_t at = i.address - base;
      ExitSite site{.vaddr = i.address, .offset = at, .part = n, .tail_call = false, .text = i.text};
      // An exit the kernel would refuse to probe (a link-time address has the file
      // offset's alignment and page position, which is all the classes look at).
      auto refused = [&] {
        InsnInfo c = classify_insn(decoder.arch(), parts[n].code.subspan(at), i.address);
        if (c.cls != InsnClass::Rejected) return false;
        scan.blocker = "the exit at " + where + hex(at) + " (" + i.text + ") cannot be probed: " + c.why;
        return true;
      };
      if (i.is_return) {
        if (!refused()) scan.sites.push_back(std::move(site));
        return;
      }
      if (i.indirect_jump) {
        scan.blocker = "an indirect jump at " + where + hex(at) + " (" + i.text + ") may leave it";
        return;
      }
      if (i.is_call || !i.direct_target || part_of(*i.direct_target)) return;
      // A jump out of the known parts: a tail call, or a jump into a split-off part.
      const std::string insn = where + hex(at) + " (" + i.text + ")";
      const bool to_function = !rules.is_function || rules.is_function(*i.direct_target);
      if (to_function) {
        const std::optional<int64_t> cfa = rules.cfa_above_sp ? rules.cfa_above_sp(i.address) : std::nullopt;
        if (i.conditional)
          scan.blocker = "a conditional tail call at " + insn + " cannot be probed when taken only";
        else if (rules.cfa_above_sp && cfa != rules.entry_cfa)
          scan.blocker = "the jump at " + insn + " leaves with its frame still set up";
        else if (!refused()) {
          site.tail_call = true;
          scan.sites.push_back(std::move(site));
        }
        return;
      }
      std::optional<CodePart> part = rules.part_at ? rules.part_at(*i.direct_target) : std::nullopt;
      if (!part) scan.blocker = "the jump at " + insn + " goes to code whose bounds are not known";
      else if (!part_of(part->vaddr)) parts.push_back(*part);
    });
    if (scan.blocker.empty() && decoded < parts[n].code.size())
      scan.blocker = "the instruction at " + where + hex(decoded) + " does not decode";
  }
  if (scan.blocker.empty() && scan.sites.empty()) scan.blocker = "it has no exit instruction";
  if (!scan.blocker.empty()) scan.sites.clear();
  return scan;
}

ExitScan find_exit_sites(const InsnDecoder& decoder, std::span<const uint8_t> code, uint64_t function_vaddr) {
  const CodePart body{.vaddr = function_vaddr, .code = code};
  return find_exit_sites(decoder, std::span<const CodePart>(&body, 1));
}

}  // namespace uprof
