#include "uprof/record/unwind_risk.h"

#include <gelf.h>

#include <array>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "uprof/record/process_traits.h"
#include "uprof/resolve/dwarf/go_runtime.h"
#include "uprof/resolve/insn/function_exits.h"

namespace uprof {

CodeFlow code_flow(const InsnDecoder& decoder, std::span<const uint8_t> code, uint64_t function_vaddr) {
  CodeFlow f{.calls_out = false, .can_leave = false};
  const uint64_t end = function_vaddr + code.size();
  std::size_t decoded = decoder.each(code, function_vaddr, [&](const DecodedInsn& i) {
    const bool out = i.direct_target && (*i.direct_target < function_vaddr || *i.direct_target >= end);
    // An indirect jump: a tail call or a jump table, cannot tell.
    if (i.is_call || i.indirect_jump || out) f.calls_out = true;
    // A jump (not a call) out of its code: a tail call, or into a split-off part that may return.
    if (i.is_return || i.indirect_jump || (out && !i.is_call)) f.can_leave = true;
  });
  if (decoded < code.size()) f.calls_out = f.can_leave = true;  // undecodable code: assume the worst
  return f;
}

bool calls_out(const InsnDecoder& decoder, std::span<const uint8_t> code, uint64_t function_vaddr) {
  return code_flow(decoder, code, function_vaddr).calls_out;
}

bool can_leave(const InsnDecoder& decoder, std::span<const uint8_t> code, uint64_t function_vaddr) {
  return code_flow(decoder, code, function_vaddr).can_leave;
}

namespace {

// glibc's (and the C library's usual) names for the functions whose saved return address
// is resumed later, or that go elsewhere than their caller.
// __start_context is entered by the ret of a makecontext'd function: the top of its stack
// is the next context's address.
constexpr std::array<std::string_view, 16> kReturnsTwice{
    "setjmp",     "_setjmp",     "__sigsetjmp", "sigsetjmp",       "savectx",       "getcontext",
    "swapcontext", "setcontext", "__start_context", "longjmp",     "_longjmp",      "siglongjmp",
    "__longjmp",  "__longjmp_chk", "__libc_longjmp", "__libc_siglongjmp"};

// The language whose exceptions or panics may unwind through the file's functions: the
// file names its personality routine ("C++" for __gxx_personality_v0, "Rust" for
// rust_eh_personality, record/process_traits.h); "" for C and files that do not unwind.
std::string unwinding_language(const ElfFile& elf) {
  for (const auto& s : elf.symbols())
    if (std::string language = personality_language(s.name); !language.empty()) return language;
  return "";
}

// Any language's, not only C++'s: Rust's panics unwind the same way.
bool is_cxx_with_exceptions(const ElfFile& elf) { return !unwinding_language(elf).empty(); }

// The ELF entry point (e_entry), 0 when the file has none.
uint64_t entry_point(const ElfFile& elf) {
  GElf_Ehdr eh;
  if (!elf.elf() || !gelf_getehdr(elf.elf(), &eh)) return 0;
  return eh.e_entry;
}

struct FileFacts {
  bool cxx = false;
  std::string go{};  // why the file is Go's ("./gw has a .go.buildinfo section"); "" when not
  std::optional<uint32_t> goid_offset{};
  uint64_t entry = 0;
};

}  // namespace

bool returns_twice(const std::string& name) {
  for (std::string_view n : kReturnsTwice)
    if (name == n) return true;
  return false;
}

bool ReturnRisk::overridable() const {
  return hazard == ReturnHazard::CxxCode || hazard == ReturnHazard::CInCxxProcess ||
         hazard == ReturnHazard::StackSwitching;
}

std::string ReturnRisk::runtime_language() const { return language.empty() ? "C++" : language; }

std::string ReturnRisk::unwinding() const {
  const std::string l = runtime_language();
  return l == "Rust" ? "a Rust panic" : l == "Ada" ? "an Ada exception" : "a " + l + " exception";
}

std::string ReturnRisk::why(const std::string& function) const {
  const std::string trampoline = " would abort the program under a return probe (the kernel's return trampoline "
                                 "has no unwind information)";
  switch (hazard) {
    case ReturnHazard::EntryPoint:
      return function + " is the program's entry point: the top of its stack is argc, not a return address, and a "
             "return probe would overwrite it";
    case ReturnHazard::ReturnsTwice:
      return function + " returns more than once or elsewhere than to its caller (setjmp, swapcontext, longjmp): "
             "a return probe would leave the kernel's trampoline as the address it resumes at";
    case ReturnHazard::NeverReturns:
      return function + " never returns (no return and no jump out of its code; entered by a jump or the kernel, the "
             "top of its stack may not be a return address)";
    case ReturnHazard::CxxCode: return unwinding() + " unwinding through " + function + trampoline;
    case ReturnHazard::CInCxxProcess:
      return unwinding() + " a callback raises, unwinding through " + function + " in a process with the " +
             runtime_language() + " runtime," + trampoline;
    case ReturnHazard::StackSwitching:
      return "the process switches stacks, and a return probe on " + function +
             " could return to another stack's caller (the kernel's pending returns follow one stack)";
    case ReturnHazard::GoCode:
      return function + " is Go code: Go's runtime walks and copies goroutine stacks and kills the program on a "
             "return address it does not know, such as a return probe's trampoline (\"unexpected return pc\")";
  }
  return {};
}

const ReturnRisk* ReturnRisks::of(const ResolvedProbe& p) const {
  if (!p.at_function_entry()) return nullptr;
  auto it = by_function.find({p.path, p.function_addr});
  return it == by_function.end() ? nullptr : &it->second;
}

bool ReturnRisks::return_probe_allowed(const ResolvedProbe& p, bool unsafe_returns) const {
  const ReturnRisk* risk = of(p);
  return !risk || (unsafe_returns && risk->overridable());
}

Result<ReturnRisks> unwind_risks(Resolver& resolver, const std::vector<ResolvedProbe>& probes,
                                 const ProcessTraits& traits) {
  ReturnRisks out;
  out.traits = traits;
  std::map<std::pair<std::string, uint64_t>, bool> decided;
  std::map<std::string, FileFacts> facts;                            // by path
  std::map<std::string, std::unique_ptr<FunctionExits>> exits_of;  // by path
  std::map<std::string, std::string> languages;                     // by path: what unwinds through it
  for (const ResolvedProbe& p : probes) {
    if (!p.at_function_entry() || !decided.try_emplace({p.path, p.function_addr}, true).second) continue;
    UPROF_ASSIGN(const Image* img, resolver.image(p.path));
    auto [f, first] = facts.try_emplace(p.path);
    if (first) {
      f->second = FileFacts{.cxx = is_cxx_with_exceptions(img->elf), .go = go_file(img->elf), .goid_offset = {},
                            .entry = entry_point(img->elf)};
      if (!f->second.go.empty()) f->second.goid_offset = go_goid_offset(img->dwarf_file()->elf());
    }
    const FileFacts& file = f->second;
    auto only_entry = [&](ReturnHazard h) {
      ReturnRisk r{.hazard = h, .exits = {}, .exits_blocker = {}, .goid_offset = {}};
      r.exits_blocker = r.why(p.function);
      out.by_function[{p.path, p.function_addr}] = std::move(r);
    };
    if (file.entry != 0 && p.function_addr == file.entry) {
      only_entry(ReturnHazard::EntryPoint);
      continue;
    }
    if (returns_twice(p.symbol) || returns_twice(p.function)) {
      only_entry(ReturnHazard::ReturnsTwice);
      continue;
    }
    std::vector<uint8_t> code;
    CodeFlow flow{};  // a function of unknown size: assume it calls out and leaves
    if (p.function_size != 0) {
      UPROF_ASSIGN(const InsnDecoder* dec, resolver.decoder(p.arch));
      UPROF_ASSIGN(code, resolver.function_bytes(*img, p.function_addr, p.function_size));
      flow = code_flow(*dec, code, p.function_addr);
      if (!flow.can_leave) {
        only_entry(ReturnHazard::NeverReturns);
        continue;
      }
    }
    // Measured at its exits, when the process makes a return probe unsafe there. In a Go
    // file, a leaf too: a goroutine preempted in it has its stack walked by the runtime.
    const bool out_calls = flow.calls_out;
    ReturnHazard hazard;
    if (!file.go.empty()) hazard = ReturnHazard::GoCode;
    else if (file.cxx && out_calls) hazard = ReturnHazard::CxxCode;
    else if (!traits.cxx_runtime.empty() && out_calls) hazard = ReturnHazard::CInCxxProcess;
    else if (!traits.switches_stacks.empty()) hazard = ReturnHazard::StackSwitching;
    else continue;
    // What unwinds, for the reason and the notes: the file's language ("Rust"), or the
    // process's runtime's.
    std::string language;
    if (hazard == ReturnHazard::CxxCode) {
      auto [l, fresh] = languages.try_emplace(p.path);
      if (fresh) l->second = unwinding_language(img->elf);
      language = l->second;
    } else if (hazard == ReturnHazard::CInCxxProcess) {
      language = traits.runtime_language;
    }
    ExitScan exits{};
    if (p.function_size == 0) {
      exits.blocker = "its size is not known";
    } else {
      auto& scanner = exits_of[p.path];
      if (!scanner) scanner = std::make_unique<FunctionExits>(resolver, *img, p.arch);
      UPROF_ASSIGN(exits, scanner->scan(p.symbol, p.function_addr, code));
    }
    out.by_function[{p.path, p.function_addr}] =
        ReturnRisk{.hazard = hazard,
                   .exits = std::move(exits.sites),
                   .exits_blocker = std::move(exits.blocker),
                   .goid_offset = hazard == ReturnHazard::GoCode ? file.goid_offset : std::nullopt,
                   .language = std::move(language)};
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
