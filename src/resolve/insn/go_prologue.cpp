#include "uprof/resolve/insn/go_prologue.h"

#include <vector>

namespace uprof {
namespace {

// The check is in the first few instructions; its tail spills the argument registers
// (up to 9 integer and 15 floating-point ones), calls morestack, reloads them, jumps back.
constexpr std::size_t kCheckInsns = 8;
constexpr std::size_t kTailInsns = 64;

// Whether the code at `target` (inside the function) reaches an unconditional jump to the
// function's entry, through straight-line code and one call, before anything else leaves.
bool restarts_function(const InsnDecoder& decoder, std::span<const uint8_t> code, uint64_t function_vaddr,
                       uint64_t target) {
  if (target <= function_vaddr || target >= function_vaddr + code.size()) return false;
  std::size_t at = target - function_vaddr;
  for (std::size_t n = 0; n < kTailInsns && at < code.size(); n++) {
    auto insn = decoder.decode(code.subspan(at), function_vaddr + at);
    if (!insn || insn->length == 0) return false;
    if (insn->changes_flow && !insn->is_call) {
      return !insn->conditional && !insn->indirect_jump && !insn->is_return && insn->direct_target == function_vaddr;
    }
    at += insn->length;
  }
  return false;
}

}  // namespace

std::optional<GoStackCheck> go_stack_check(const InsnDecoder& decoder, std::span<const uint8_t> code,
                                           uint64_t function_vaddr) {
  std::optional<GoStackCheck> out;
  std::string text;
  std::size_t at = 0;
  for (std::size_t n = 0; n < kCheckInsns && at < code.size(); n++) {
    auto insn = decoder.decode(code.subspan(at), function_vaddr + at);
    if (!insn || insn->length == 0) break;
    text += (text.empty() ? "" : "; ") + insn->text;
    at += insn->length;
    if (!insn->changes_flow) continue;
    // The check's branches are conditional and go to the restarting tail; anything
    // else that changes flow is the body's.
    if (!insn->conditional || !insn->direct_target ||
        !restarts_function(decoder, code, function_vaddr, *insn->direct_target))
      break;
    out = GoStackCheck{.end = at, .text = text};
  }
  return out;
}

}  // namespace uprof
