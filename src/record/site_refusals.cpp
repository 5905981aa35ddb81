#include "uprof/record/site_refusals.h"

#include <algorithm>
#include <set>

namespace uprof {
namespace {

constexpr std::size_t kInsnBytes = 16;  // the longest x86-64 instruction is 15

}  // namespace

Result<std::optional<SiteRefusal>> refusal_of(Resolver& resolver, const ResolvedProbe& probe) {
  UPROF_ASSIGN(const Image* img, resolver.image(probe.path));
  const uint64_t size = img->elf.file_size();
  const std::size_t n = probe.file_offset < size ? std::min<uint64_t>(kInsnBytes, size - probe.file_offset) : 0;
  std::vector<uint8_t> code;
  if (n) {
    UPROF_ASSIGN(code, img->elf.read_bytes(probe.file_offset, n));
  }
  const uint64_t in_function = probe.function.empty() ? 0 : probe.vaddr - probe.function_addr;
  return site_refusal(probe.arch, probe.path, probe.function, in_function, probe.file_offset, code);
}

Status refuse_sites(Resolver& resolver, std::vector<ResolvedProbe>& probes, const std::vector<ProbeSpec>& specs,
                    std::vector<std::string>& notes) {
  std::set<std::string> globs;
  for (const auto& s : specs)
    if (is_glob(s)) globs.insert(s.text);
  std::vector<ResolvedProbe> kept;
  std::string last;
  std::set<std::pair<std::string, uint64_t>> told;  // a site's line once, for its entry and its return
  for (auto& p : probes) {
    UPROF_ASSIGN(std::optional<SiteRefusal> refused, refusal_of(resolver, p));
    if (!refused) {
      kept.push_back(std::move(p));
      continue;
    }
    last = refusal_line(*refused);
    if (!globs.count(p.spec)) return err("record: ", last);
    if (told.insert({p.path, p.file_offset}).second) notes.push_back("skipped " + last);
  }
  if (kept.empty() && !probes.empty())
    return err("record: no site the specs name can be probed; the last: ", last);
  probes = std::move(kept);
  return ok();
}

}  // namespace uprof
