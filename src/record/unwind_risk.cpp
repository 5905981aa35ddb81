#include "uprof/record/unwind_risk.h"

#include <map>
#include <memory>
#include <string>

#include "uprof/resolve/insn/function_exits.h"

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
  struct Decision {
    bool risky = true;
    ExitScan exits{};
  };
  std::map<std::pair<std::string, uint64_t>, Decision> decided;
  std::map<std::string, bool> cxx;
  std::map<std::string, std::unique_ptr<FunctionExits>> exits_of;  // by path
  for (ResolvedProbe& p : probes) {
    if (p.offset_in_function != 0 || p.function.empty() || p.usdt || p.site) continue;
    UPROF_ASSIGN(const Image* img, resolver.image(p.path));
    auto [c, first] = cxx.try_emplace(p.path, false);
    if (first) c->second = is_cxx_with_exceptions(img->elf);
    if (!c->second) continue;
    auto [it, fresh] = decided.try_emplace({p.path, p.function_addr});
    if (fresh) {
      Decision& d = it->second;
      if (p.function_size == 0) {
        d.exits.blocker = "its size is not known";
      } else {
        UPROF_ASSIGN(const InsnDecoder* dec, resolver.decoder(p.arch));
        UPROF_ASSIGN(std::vector<uint8_t> code, resolver.function_bytes(*img, p.function_addr, p.function_size));
        d.risky = calls_out(*dec, code, p.function_addr);
        if (d.risky) {
          auto& exits = exits_of[p.path];
          if (!exits) exits = std::make_unique<FunctionExits>(resolver, *img, p.arch);
          UPROF_ASSIGN(d.exits, exits->scan(p.symbol, p.function_addr, code));
        }
      }
    }
    if (!it->second.risky) continue;
    p.return_risk = "a C++ exception unwinding through " + p.function +
                    " would abort the program under a return probe (the kernel's return trampoline has no unwind "
                    "information)";
    p.exits = it->second.exits.sites;
    p.exits_blocker = it->second.exits.blocker;
  }
  return ok();
}

void drop_exits_at_entry(std::vector<ResolvedProbe>& probes) {
  for (ResolvedProbe& p : probes) {
    for (const ExitSite& x : p.exits) {
      if (x.vaddr != p.vaddr) continue;
      p.exits_blocker = "its entry site is also an exit (" + x.text + ")";
      p.exits.clear();
      break;
    }
  }
}

}  // namespace uprof
