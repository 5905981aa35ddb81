#include "uprof/record/unwind_risk.h"

#include <map>
#include <string>

namespace uprof {

bool calls_out(const InsnDecoder& decoder, std::span<const uint8_t> code, uint64_t function_vaddr) {
  bool out = false;
  const uint64_t end = function_vaddr + code.size();
  std::size_t decoded = decoder.each(code, function_vaddr, [&](const DecodedInsn& i) {
    if (i.is_call || i.indirect_jump) out = true;  // an indirect jump: a tail call or a jump table, cannot tell
    if (i.direct_target && (*i.direct_target < function_vaddr || *i.direct_target >= end)) out = true;  // tail call
  });
  return out || decoded < code.size();  // undecodable code: assume it calls out
}

namespace {

bool is_cxx_with_exceptions(const ElfFile& elf) {
  for (const auto& s : elf.symbols())
    if (s.name == "__gxx_personality_v0" || s.name == "DW.ref.__gxx_personality_v0") return true;
  return false;
}

}  // namespace

Status mark_unwind_risk(Resolver& resolver, std::vector<ResolvedProbe>& probes) {
  std::map<std::pair<std::string, uint64_t>, bool> decided;
  std::map<std::string, bool> cxx;
  for (ResolvedProbe& p : probes) {
    if (p.offset_in_function != 0 || p.function.empty()) continue;
    UPROF_ASSIGN(const Image* img, resolver.image(p.path));
    auto [c, first] = cxx.try_emplace(p.path, false);
    if (first) c->second = is_cxx_with_exceptions(img->elf);
    if (!c->second) continue;
    auto [it, fresh] = decided.try_emplace({p.path, p.function_addr}, true);
    if (fresh) {
      UPROF_ASSIGN(const InsnDecoder* d, resolver.decoder(p.arch));
      UPROF_ASSIGN(std::vector<uint8_t> code, resolver.function_bytes(*img, p.function_addr, p.function_size));
      it->second = p.function_size == 0 || calls_out(*d, code, p.function_addr);
    }
    if (it->second)
      p.return_risk = "a C++ exception unwinding through " + p.function +
                      " would abort the program under a return probe (the kernel's return trampoline has no unwind "
                      "information)";
  }
  return ok();
}

}  // namespace uprof
