#include "uprof/present/caller_text.h"

#include <algorithm>
#include <cstdio>

#include "uprof/analyse/duration_format.h"
#include "uprof/present/text_table.h"
#include "uprof/util/thousands.h"

namespace uprof {

std::string share_text(uint64_t part, uint64_t whole) {
  if (!whole) return "-";
  char buf[32];
  const double p = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  std::snprintf(buf, sizeof buf, p > 0 && p < 0.1 ? "<0.1%%" : "%.1f%%", p);
  return buf;
}

std::string off_cpu_kinds_text(const CpuSplit& s) {
  const uint64_t whole = s.on_cpu_ns + s.off_cpu_ns();
  std::vector<std::size_t> kinds;
  for (std::size_t k = 0; k < kOffCpuKinds; ++k)
    if (s.off[k]) kinds.push_back(k);
  std::stable_sort(kinds.begin(), kinds.end(), [&](std::size_t a, std::size_t b) { return s.off[a] > s.off[b]; });
  std::string out;
  for (std::size_t k : kinds)
    out += (out.empty() ? "" : ", ") + std::string(to_string(static_cast<OffCpuKind>(k))) + " " +
           share_text(s.off[k], whole);
  return out;
}

std::string cpu_split_text(const CpuSplit& s) {
  const uint64_t off = s.off_cpu_ns(), whole = s.on_cpu_ns + off;
  const std::string kinds = off_cpu_kinds_text(s);
  return "on-CPU " + format_duration(s.on_cpu_ns) + " (" + share_text(s.on_cpu_ns, whole) + "), off-CPU " +
         format_duration(off) + " (" + share_text(off, whole) + (kinds.empty() ? "" : ": " + kinds) + ")";
}

std::string callers_text(const ReportModel& m, uint32_t function, std::size_t top, const std::string& indent) {
  if (!m.stacks) return {};
  const std::vector<std::size_t> callers = m.stacks->callers_of(function);
  if (callers.empty()) return {};
  std::vector<TextTable::Column> cols{{"CALLER"}, {"CALLS", Align::Right}, {"TOTAL", Align::Right},
                                      {"P50", Align::Right}, {"P99", Align::Right}};
  if (m.offcpu) {
    cols.push_back({"ON-CPU", Align::Right});
    cols.push_back({"OFF-CPU"});
  }
  TextTable t(std::move(cols));
  for (std::size_t i = 0; i < callers.size() && i < top; ++i) {
    const CallerStats& c = m.stacks->callers[callers[i]];
    std::vector<std::string> row{c.caller, with_commas(c.w.calls), format_duration(c.w.latency_ns),
                                 format_duration(c.latency.percentile(50)), format_duration(c.latency.percentile(99))};
    if (m.offcpu) {
      const CpuSplit& s = c.w.cpu;
      const uint64_t whole = s.on_cpu_ns + s.off_cpu_ns();
      const std::string kinds = off_cpu_kinds_text(s);
      row.push_back(s.recorded() ? share_text(s.on_cpu_ns, whole) : "-");
      row.push_back(s.recorded() ? share_text(s.off_cpu_ns(), whole) + (kinds.empty() ? "" : " (" + kinds + ")") : "-");
    }
    t.add_row(std::move(row));
  }
  std::string out = indent + "callers (by latency" +
                    (callers.size() > top ? ", top " + std::to_string(top) + " of " + with_commas(callers.size()) : "") +
                    "):\n";
  std::string table = t.render();
  for (std::size_t at = 0; at < table.size();) {
    const std::size_t nl = table.find('\n', at);
    out += indent + "  " + table.substr(at, nl == std::string::npos ? std::string::npos : nl - at + 1);
    if (nl == std::string::npos) {
      out += "\n";
      break;
    }
    at = nl + 1;
  }
  return out;
}

std::string stacks_summary(const ReportModel& m) {
  if (!m.stacks) return {};
  const CallStacks& s = m.stacks.value();
  std::string out = with_commas(s.calls - s.without_stack) + " calls with a stack";
  if (s.without_stack) out += ", " + with_commas(s.without_stack) + " without (shorter than -g --stack-min, or not unwound)";
  if (s.over_limit) out += "; " + with_commas(s.over_limit) + " calls in stacks past the " + kMoreStacks + " limit";
  for (const std::string& p : s.problems) out += "; " + p;
  return out;
}

}  // namespace uprof
