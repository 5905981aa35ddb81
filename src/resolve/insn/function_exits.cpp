#include "uprof/resolve/insn/function_exits.h"

#include <gelf.h>

#include <string_view>

namespace uprof {
namespace {

// The address ranges of the PLT sections (.plt, .plt.sec, .plt.got).
std::vector<std::pair<uint64_t, uint64_t>> plt_ranges(Elf* elf) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  size_t shstrndx = 0;
  if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0) return out;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (name && std::string_view(name).starts_with(".plt")) out.emplace_back(sh.sh_addr, sh.sh_addr + sh.sh_size);
  }
  return out;
}

bool is_cold_name(std::string_view name) { return name.find(".cold") != std::string_view::npos; }

// The parts gcc split off functions (`f.cold`, `f.cold.1`), by the function's symbol name.
std::map<std::string, std::vector<const Function*>> split_parts(const FunctionTable& table) {
  std::map<std::string, std::vector<const Function*>> parts;
  for (const Function& f : table.functions()) {
    for (const SymbolName& n : f.names) {
      const std::size_t at = n.name.rfind(".cold");
      if (at == std::string::npos || at == 0) continue;
      const std::string_view rest = std::string_view(n.name).substr(at + 5);
      if (!rest.empty() && rest[0] != '.') continue;
      parts[n.name.substr(0, at)].push_back(&f);
      break;
    }
  }
  return parts;
}

}  // namespace

FunctionExits::FunctionExits(Resolver& resolver, const Image& img, Arch arch)
    : resolver_(resolver),
      img_(img),
      arch_(arch),
      frames_(img.elf.elf(), arch),
      plts_(plt_ranges(img.elf.elf())),
      split_(split_parts(img.functions)) {}

bool FunctionExits::is_function(uint64_t addr) const {
  for (const auto& [lo, hi] : plts_)
    if (addr >= lo && addr < hi) return true;
  const Function* f = img_.functions.containing(addr);
  return f && f->addr == addr && !is_cold_name(f->name());
}

std::optional<CodePart> FunctionExits::part_at(uint64_t target) {
  auto range = frames_.fde_range(target);
  if (!range || target < range->first || target >= range->second) return std::nullopt;
  auto bytes = resolver_.function_bytes(img_, range->first, range->second - range->first, 64 << 10);
  if (!bytes.ok()) return std::nullopt;
  part_bytes_.push_back(std::make_unique<std::vector<uint8_t>>(std::move(*bytes)));
  return CodePart{.vaddr = range->first, .code = *part_bytes_.back()};
}

Result<ExitScan> FunctionExits::scan(const std::string& symbol, uint64_t addr, std::span<const uint8_t> body) {
  UPROF_ASSIGN(const InsnDecoder* decoder, resolver_.decoder(arch_));
  std::vector<CodePart> parts{{.vaddr = addr, .code = body}};
  if (auto found = split_.find(symbol); found != split_.end()) {
    for (const Function* f : found->second) {
      UPROF_ASSIGN(std::vector<uint8_t> bytes, resolver_.function_bytes(img_, f->addr, f->size));
      part_bytes_.push_back(std::make_unique<std::vector<uint8_t>>(std::move(bytes)));
      parts.push_back({.vaddr = f->addr, .code = *part_bytes_.back()});
    }
  }
  ExitRules rules{.cfa_above_sp = {}, .part_at = {}, .is_function = [this](uint64_t a) { return is_function(a); },
                  .entry_cfa = arch_info(arch_).entry_cfa};
  if (frames_.present()) {
    rules.cfa_above_sp = [this](uint64_t pc) { return frames_.cfa_above_sp(pc); };
    rules.part_at = [this](uint64_t target) { return part_at(target); };
  }
  ExitScan scan = find_exit_sites(*decoder, parts, rules);
  part_bytes_.clear();  // the scan is done with them
  return scan;
}

}  // namespace uprof
