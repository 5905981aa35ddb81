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

std::string ReturnRisk::why(const std::string& function) {
  return "a C++ exception unwinding through " + function +
         " would abort the program under a return probe (the kernel's return trampoline has no unwind information)";
}

const ReturnRisk* ReturnRisks::of(const ResolvedProbe& p) const {
  if (!p.at_function_entry()) return nullptr;
  auto it = by_function.find({p.path, p.function_addr});
  return it == by_function.end() ? nullptr : &it->second;
}

Result<ReturnRisks> unwind_risks(Resolver& resolver, const std::vector<ResolvedProbe>& probes) {
  ReturnRisks out;
  std::map<std::pair<std::string, uint64_t>, bool> decided;
  std::map<std::string, bool> cxx;
  std::map<std::string, std::unique_ptr<FunctionExits>> exits_of;  // by path
  for (const ResolvedProbe& p : probes) {
    if (!p.at_function_entry()) continue;
    UPROF_ASSIGN(const Image* img, resolver.image(p.path));
    auto [c, first] = cxx.try_emplace(p.path, false);
    if (first) c->second = is_cxx_with_exceptions(img->elf);
    if (!c->second || !decided.try_emplace({p.path, p.function_addr}, true).second) continue;
    ExitScan exits{};
    if (p.function_size == 0) {
      exits.blocker = "its size is not known";
    } else {
      UPROF_ASSIGN(const InsnDecoder* dec, resolver.decoder(p.arch));
      UPROF_ASSIGN(std::vector<uint8_t> code, resolver.function_bytes(*img, p.function_addr, p.function_size));
      if (!calls_out(*dec, code, p.function_addr)) continue;
      auto& scanner = exits_of[p.path];
      if (!scanner) scanner = std::make_unique<FunctionExits>(resolver, *img, p.arch);
      UPROF_ASSIGN(exits, scanner->scan(p.symbol, p.function_addr, code));
    }
    out.by_function[{p.path, p.function_addr}] =
        ReturnRisk{.exits = std::move(exits.sites), .exits_blocker = std::move(exits.blocker)};
  }
  return out;
}

void drop_exits_at_entry(const std::vector<ResolvedProbe>& probes, ReturnRisks& risks) {
  for (const ResolvedProbe& p : probes) {
    if (!p.at_function_entry()) continue;
    auto it = risks.by_function.find({p.path, p.function_addr});
    if (it == risks.by_function.end()) continue;
    ReturnRisk& r = it->second;
    for (const ExitSite& x : r.exits) {
      if (x.vaddr != p.vaddr) continue;
      r.exits_blocker = "its entry site is also an exit (" + x.text + ")";
      r.exits.clear();
      break;
    }
  }
}

}  // namespace uprof
