#include "uprof/present/usdt_listing.h"

#include "uprof/present/text_table.h"
#include "uprof/util/hex.h"

namespace uprof {

std::string render_usdt_list(const std::string& path, const std::vector<UsdtProbe>& probes) {
  if (probes.empty()) return path + ": no USDT probes (no .note.stapsdt notes)\n";
  TextTable t({{"PROVIDER"}, {"NAME"}, {"OFFSET", Align::Right}, {"ADDRESS", Align::Right},
               {"SEMAPHORE", Align::Right}, {"ARGS"}});
  for (const auto& p : probes)
    t.add_row({p.note.provider, p.note.name, hex(p.file_offset), hex(p.vaddr),
               p.semaphore_offset ? hex(*p.semaphore_offset) : "-", p.note.args});
  return t.render();
}

}  // namespace uprof
