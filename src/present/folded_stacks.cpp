#include "uprof/present/folded_stacks.h"

namespace uprof {

Status check_stack_format(const ReportModel& m, StackWeight w, std::string_view format) {
  if (!m.stacks)
    return err("report: --format ", format, ": ", m.path, " holds no call stacks (record it with -g)");
  if ((w == StackWeight::OnCpu || w == StackWeight::OffCpu) && !m.offcpu)
    return err("report: --weight ", to_string(w), ": ", m.path, " holds no off-CPU times (record it with --off-cpu)");
  return ok();
}

std::string stack_frame_text(std::string_view name) {
  std::string s(name);
  for (char& c : s)
    if (c == ';') c = ':';
    else if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string render_folded(const ReportModel& m, StackWeight w) {
  std::string out;
  if (!m.stacks) return out;
  for (const NamedStack& s : m.stacks->stacks) {
    const uint64_t v = weight_of(s.w, w);
    if (!v) continue;  // nothing to draw; the function's other lines still add up
    for (const std::string& f : s.frames) out += stack_frame_text(f) + ";";
    out += stack_frame_text(m.functions.functions[s.function].name) + " " + std::to_string(v) + "\n";
  }
  return out;
}

}  // namespace uprof
