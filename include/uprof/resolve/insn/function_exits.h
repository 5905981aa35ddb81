// The exits of a file's functions (resolve/insn/exit_sites.h) with what the file tells about
// them: the parts gcc split off (`f.cold`, by name), its PLT (a jump there is a tail
// call), and its call frame information (the frame at a jump; a nameless part's bounds).
// One per file; record/unwind_risk.h asks it for the functions at risk.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "uprof/resolve/dwarf/call_frames.h"
#include "uprof/resolve/insn/exit_sites.h"
#include "uprof/resolve/resolver.h"

namespace uprof {

class FunctionExits {
 public:
  FunctionExits(Resolver& resolver, const Image& img, Arch arch);

  // The exits of the function at `addr` named `symbol`, whose body (from the symbol) is `body`.
  Result<ExitScan> scan(const std::string& symbol, uint64_t addr, std::span<const uint8_t> body);

 private:
  bool is_function(uint64_t addr) const;
  std::optional<CodePart> part_at(uint64_t target);

  Resolver& resolver_;
  const Image& img_;
  Arch arch_;
  CallFrames frames_;
  std::vector<std::pair<uint64_t, uint64_t>> plts_;
  std::map<std::string, std::vector<const Function*>> split_;  // by the function's symbol
  std::vector<std::unique_ptr<std::vector<uint8_t>>> part_bytes_;  // the parts' code, kept for the scan
};

}  // namespace uprof
