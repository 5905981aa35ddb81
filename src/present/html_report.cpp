#include "uprof/present/html_report.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "uprof/analyse/duration_format.h"
#include "uprof/analyse/log_scale.h"
#include "uprof/present/caller_text.h"
#include "uprof/present/html_page.h"
#include "uprof/present/markup.h"
#include "uprof/present/plot_axes.h"
#include "uprof/present/report_notes.h"
#include "uprof/present/svg_flame.h"
#include "uprof/present/svg_histogram.h"
#include "uprof/present/svg_timeline.h"
#include "uprof/present/value_text.h"
#include "uprof/util/thousands.h"

namespace uprof {

namespace {

constexpr unsigned kBinsPerOctave = 8;  // histogram bars: 2^(1/8), 9% wide

std::string text(std::string_view s) { return escape_markup(s); }

// The shared sentences (report_notes.h) write durations as the terminal does, "16.4us";
// the page writes "16.4µs" everywhere.
std::string micro(std::string s) {
  for (std::size_t at = s.find("us"); at != std::string::npos; at = s.find("us", at + 1)) {
    const bool after_digit = at > 0 && s[at - 1] >= '0' && s[at - 1] <= '9';
    const bool word_ends = at + 2 == s.size() || !std::isalpha(static_cast<unsigned char>(s[at + 2]));
    if (after_digit && word_ends) s.replace(at, 2, "µs");
  }
  return s;
}
std::string code(std::string_view s) { return "<code>" + escape_markup(s) + "</code>"; }

std::string function_anchor(uint32_t function) { return "fn-" + std::to_string(function); }

std::vector<PlotMarker> percentile_markers(const LatencyHistogram& h) {
  return {{"p50", h.percentile(50)}, {"p90", h.percentile(90)}, {"p99", h.percentile(99)}, {"p99.9", h.percentile(99.9)}};
}

// The events line of the header, and a badge that says how complete the recording is.
std::string events_fact(const ReportModel& m) {
  std::string s = with_commas(m.samples) + " samples, " + with_commas(m.lost) + " lost";
  uint64_t kernel = 0;
  if (m.trailer) {
    for (const auto& c : m.trailer->counts) kernel += c.kernel;
    s += "; kernel counted " + with_commas(kernel);
    if (m.trailer->exit_status >= 0) s += "; exit status " + std::to_string(m.trailer->exit_status);
  }
  s = text(s);
  if (!m.trailer)
    s += "<span class=\"badge bad\">cut short: what it holds is reported</span>";
  else if (m.lost)
    s += "<span class=\"badge warn\">" + text(with_commas(m.lost)) + " lost: some calls are missing</span>";
  else if (kernel && kernel != m.samples)
    s += "<span class=\"badge warn\">recorded " + text(with_commas(m.samples)) + " of the kernel's " +
         text(with_commas(kernel)) + "</span>";
  else
    s += "<span class=\"badge ok\">every probe hit recorded</span>";
  return s;
}

std::string header(const ReportModel& m) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.3f s", recording_seconds(m));
  std::string out = "<header class=\"report\"><h1>uprof report</h1><p class=\"lede mono\">" + text(m.path) + "</p>";
  out += "<dl class=\"facts\">";
  auto fact = [&](std::string_view term, const std::string& markup) {
    out += "<dt>" + text(term) + "</dt><dd>" + markup + "</dd>";
  };
  fact("Command", code(join_command(m.meta.command)));
  fact("Recorded", text(format_wall_time(m.meta.start_realtime_ns) + ", for " + secs));
  fact("Host", text(m.meta.hostname + " (" + std::string(arch_info(m.meta.arch).name) + ")"));
  fact("Kernel", text("Linux " + m.meta.kernel));
  fact("Engine", text(m.meta.engine.empty() ? "not recorded in the file"
                                             : m.meta.engine + (m.meta.attach.empty() ? "" : " (" + m.meta.attach + ")")));
  fact("Events", events_fact(m));
  if (m.pairing.cut_by_loss())
    fact("Losses", text(loss_cut_text(m.pairing.unmatched_of(UnmatchedReason::Lost),
                                      m.pairing.unmatched_of(UnmatchedReason::ReturnAfterLoss))));
  std::string latency = "paired entry to return; percentiles within " +
                        std::string(LatencyHistogram::kRelativeError * 100 < 0.5 ? "0.39%" : "1%") +
                        " (exact below 256ns), count, total, min and max exact";
  fact("Latency", text(latency));
  if (std::string comp = compensation_text(m); !comp.empty()) fact("Compensation", text(micro(comp)));
  if (m.filtered_out)
    fact("Filtered", text(with_commas(m.filtered_out) + " calls and hits left out by the filters"));
  out += "</dl>";
  for (const auto& p : m.problems) out += "<p class=\"note bad\">warning: " + text(m.path + ": " + p) + "</p>";
  return out + "</header>";
}

// The figures of one group, as the text report's table has them.
std::vector<std::string> figures(const ReportModel& m, const GroupStats& g) {
  const FunctionInfo& f = m.functions.functions[g.function];
  const auto& h = g.latency;
  if (!f.paired() || !h.count())
    return {text(with_commas(g.calls)), "-", "-", "-", "-", "-", "-", "-", "-",
            f.paired() ? text(with_commas(g.unmatched_total())) : "-"};
  return {text(with_commas(g.calls)),          text(plot_duration(h.total())),
          text(plot_duration(static_cast<uint64_t>(h.mean() + 0.5))), text(plot_duration(h.min())),
          text(plot_duration(h.percentile(50))), text(plot_duration(h.percentile(90))),
          text(plot_duration(h.percentile(99))), text(plot_duration(h.percentile(99.9))),
          text(plot_duration(h.max())),        text(with_commas(g.unmatched_total()))};
}

std::vector<HtmlTable::Column> figure_columns(std::string first) {
  std::vector<HtmlTable::Column> c{{std::move(first), false}};
  for (const char* n : {"calls", "total", "mean", "min", "p50", "p90", "p99", "p99.9", "max", "unmatched"})
    c.push_back({n, true});
  return c;
}

std::string summary_table(const ReportModel& m, const TextReportOptions& o, const std::vector<bool>& has_section) {
  HtmlTable t{.columns = figure_columns("function"), .rows = {}, .css_class = "summary"};
  for (std::size_t i : sorted_groups(m, o.sort)) {
    const GroupStats& g = m.groups[i];
    std::string name = code(group_label(m, g));
    if (g.function < has_section.size() && has_section[g.function])
      name = "<a href=\"#" + function_anchor(g.function) + "\">" + name + "</a>";
    std::vector<std::string> row{name};
    for (auto& cell : figures(m, g)) row.push_back(std::move(cell));
    t.rows.push_back(std::move(row));
  }
  return "<div class=\"panel\">" + html_table(t) + "</div>";
}

// What a small multiple stands for, without the function's name: "thread 4711 (worker) of pid 4700".
std::string split_label(const ReportModel& m, const GroupStats& g) {
  std::vector<std::string> parts;
  if (m.options.by == GroupBy::Caller) parts.push_back(g.has_caller ? "from " + g.caller : "no stack");
  if (g.tid)
    parts.push_back("thread " + std::to_string(g.tid) + (g.comm.empty() ? "" : " (" + g.comm + ")") +
                    (g.pid != g.tid ? " of pid " + std::to_string(g.pid) : ""));
  else if (g.pid)
    parts.push_back("pid " + std::to_string(g.pid) + (g.comm.empty() ? "" : " (" + g.comm + ")"));
  if (g.other_values) {
    parts.push_back(m.options.by_value + " = other values");
  } else if (g.has_by_value) {
    for (const auto& v : m.functions.functions[g.function].values)
      if (v.name == m.options.by_value) {
        parts.push_back(v.name + " = " + format_value(g.by_value, v));
        break;
      }
  } else if (!m.options.by_value.empty()) {
    parts.push_back(m.options.by_value + " not captured");
  }
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s;
}

std::string small_multiples(const ReportModel& m, uint32_t function, std::pair<double, double> range,
                            const LogScale& scale) {
  std::vector<const GroupStats*> groups;
  for (const GroupStats& g : m.groups)
    if (g.function == function) groups.push_back(&g);
  std::stable_sort(groups.begin(), groups.end(), [](auto* a, auto* b) { return a->calls > b->calls; });
  const std::string by = m.options.by == GroupBy::Thread    ? "thread"
                         : m.options.by == GroupBy::Process ? "process"
                         : m.options.by == GroupBy::Goroutine ? "goroutine"
                         : m.options.by == GroupBy::Caller    ? "caller"
                                                            : "";
  std::string what = by.empty() ? m.options.by_value : m.options.by_value.empty() ? by : by + " and " + m.options.by_value;
  // One group is the function itself: the plots above are its.
  if (groups.size() == 1)
    return "<h3>By " + text(what) + "</h3><p class=\"muted\">One group, " + text(split_label(m, *groups[0])) +
           ": the plots above are its own.</p>";
  std::string out = "<h3>By " + text(what) + "</h3><p class=\"muted\">" + text(with_commas(groups.size())) +
                    (groups.size() == 1 ? " group" : " groups") +
                    ", most calls first; the same latency axis as above, each its own count axis" +
                    (groups.size() > kMaxSmallMultiples ? "; the first " + std::to_string(kMaxSmallMultiples) + " shown" : "") +
                    ".</p><div class=\"multiples\">";
  for (std::size_t i = 0; i < groups.size() && i < kMaxSmallMultiples; ++i) {
    const GroupStats& g = *groups[i];
    const std::string label = split_label(m, g);
    std::string caption = text(label) + " <span class=\"muted\">" + text(with_commas(g.calls)) + " calls";
    if (g.latency.count())
      caption += text(", p50 " + plot_duration(g.latency.percentile(50)) + ", p99 " + plot_duration(g.latency.percentile(99)));
    caption += "</span>";
    out += "<figure><figcaption>" + caption + "</figcaption>";
    if (g.latency.count()) {
      HistogramPlot p{.series = {HistSeries{.bins = log_bins(g.latency, scale), .name = {}, .css_class = {}}},
                      .markers = {{"p50", g.latency.percentile(50)}, {"p99", g.latency.percentile(99)}},
                      .lo_ns = range.first,
                      .hi_ns = range.second,
                      .max_count = 0,
                      .width = 250,
                      .height = 120,
                      .compact = true,
                      .label = "latency of " + m.functions.functions[function].name + ", " + label,
                      .attributes = "data-group=\"" + text(label) + "\""};
      out += histogram_svg(p);
    }
    out += "</figure>";
  }
  return out + "</div>";
}

// record -g: the function's callers as an icicle weighted by latency (split on/off-CPU
// with record --off-cpu), and the callers' table.
std::string callers_section(const ReportModel& m, const GroupStats& total) {
  if (!m.stacks) return {};
  const FunctionInfo& f = m.functions.functions[total.function];
  const FlameNode root = caller_tree(*m.stacks, total.function, f.name);
  if (!root.w.calls) return {};
  std::string out = "<h3>Callers</h3><p class=\"muted\">Each frame as wide as the latency of the calls that came "
                    "through it: the function on top, who called it below.</p>";
  if (m.offcpu)
    out = "<h3>Callers</h3><p class=\"muted\">Each frame as wide as the latency of the calls that came "
          "through it: the function on top, who called it below; each frame split into its time "
          "<svg width=\"10\" height=\"10\"><rect class=\"fl-on\" width=\"10\" height=\"10\" fill=\"#e8743b\"/></svg> "
          "on the CPU and "
          "<svg width=\"10\" height=\"10\"><rect class=\"fl-off\" width=\"10\" height=\"10\" fill=\"#5b8fd6\"/></svg> "
          "off it.</p>";
  out += "<div class=\"panel\">" +
         flame_svg(root, FlamePlot{.width = 1000, .row_height = 18, .max_depth = 40, .min_frame_width = 0.5,
                                   .split = m.offcpu, .label = "callers of " + f.name + " by latency"}) +
         "</div>";
  std::vector<HtmlTable::Column> cols{{"caller", false}, {"calls", true}, {"total", true}, {"p50", true}, {"p99", true}};
  if (m.offcpu) {
    cols.push_back({"on-CPU", true});
    cols.push_back({"off-CPU", false});
  }
  HtmlTable t{.columns = std::move(cols), .rows = {}, .css_class = "callers"};
  for (std::size_t i : m.stacks->callers_of(total.function)) {
    const CallerStats& c = m.stacks->callers[i];
    std::vector<std::string> row{code(c.caller), text(with_commas(c.w.calls)), text(plot_duration(c.w.latency_ns)),
                                 text(plot_duration(c.latency.percentile(50))), text(plot_duration(c.latency.percentile(99)))};
    if (m.offcpu) {
      const CpuSplit& sp = c.w.cpu;
      const uint64_t whole = sp.on_cpu_ns + sp.off_cpu_ns();
      const std::string kinds = off_cpu_kinds_text(sp);
      row.push_back(sp.recorded() ? text(share_text(sp.on_cpu_ns, whole)) : "-");
      row.push_back(sp.recorded() ? text(share_text(sp.off_cpu_ns(), whole) + (kinds.empty() ? "" : " (" + kinds + ")")) : "-");
    }
    t.rows.push_back(std::move(row));
  }
  return out + html_table(t);
}

std::string function_section(const ReportModel& m, const TextReportOptions& o, const GroupStats& total,
                             const CallTimeline* timeline) {
  const FunctionInfo& f = m.functions.functions[total.function];
  const auto& h = total.latency;
  std::string out = "<section class=\"fn\" id=\"" + function_anchor(total.function) + "\" data-function=\"" +
                    text(f.name) + "\"><header><h2>" + code(f.name) + "</h2><span class=\"path mono\">" + text(f.path) +
                    "</span></header>";
  for (const std::string& note : group_notes(m, total)) out += "<p class=\"note\">" + text(micro(note)) + "</p>";

  HtmlTable t{.columns = figure_columns(""), .rows = {}, .css_class = "figures"};
  t.columns.erase(t.columns.begin());
  t.rows.push_back(figures(m, total));
  out += html_table(t);
  if (total.cpu.recorded()) out += "<p class=\"muted\">" + text(micro(cpu_split_text(total.cpu))) + "</p>";
  if (total.unmatched_total()) {
    std::string s;
    for (std::size_t r = 0; r < kUnmatchedReasons; r++)
      if (total.unmatched[r])
        s += (s.empty() ? "" : ", ") + std::string(to_string(static_cast<UnmatchedReason>(r))) + " " + with_commas(total.unmatched[r]);
    out += "<p class=\"muted\">unmatched entries: " + text(s) + "</p>";
  }

  if (!f.paired()) {
    out += "<p class=\"muted\">" + text(with_commas(total.calls)) +
           " hits; this probe has no return side, so its calls have no latency.</p>";
  } else if (!h.count()) {
    out += "<p class=\"muted\">No call completed: nothing to plot.</p>";
  } else {
    const LogScale scale(kBinsPerOctave);
    LogBins bins = log_bins(h, scale);
    // The function's axis: its small multiples and its latency over time share it.
    const auto range = histogram_range(bins);
    const std::string name = text(f.name);
    HistogramPlot hp{.series = {HistSeries{.bins = std::move(bins), .name = {}, .css_class = {}}},
                     .markers = percentile_markers(h),
                     .lo_ns = range.first,
                     .hi_ns = range.second,
                     .max_count = 0,
                     .width = 480,
                     .height = 230,
                     .compact = false,
                     .label = "latency histogram of " + f.name,
                     .attributes = "data-function=\"" + name + "\""};
    out += "<div class=\"plots\"><figure><figcaption>Latency histogram <span class=\"muted\">" +
           text(with_commas(h.count())) + " calls, " + std::to_string(kBinsPerOctave) +
           " bars per doubling</span></figcaption>" + histogram_svg(hp) + "</figure>";
    if (timeline && timeline->calls()) {
      const auto span = static_cast<uint64_t>(recording_seconds(m) * 1e9);
      TimelinePlot tp{.span_ns = std::max(span, timeline->last_time() + 1),
                      .lo_ns = range.first,
                      .hi_ns = range.second,
                      .points = timeline->kept(),
                      .grid = timeline->grid(),
                      .markers = {{"p50", h.percentile(50)}, {"p99", h.percentile(99)}},
                      .width = 480,
                      .height = 230,
                      .label = "latency over time of " + f.name,
                      .attributes = "data-function=\"" + name + "\""};
      const std::string how = timeline->exact() ? "every call a dot"
                                                : "calls per time and latency cell; dots: the " +
                                                      std::to_string(tp.points.size()) + " slowest";
      out += "<figure><figcaption>Latency over time <span class=\"muted\">" + text(how) + "</span></figcaption>" +
             timeline_svg(tp) + "</figure>";
    }
    out += "</div>";
    if (m.options.by != GroupBy::Function || !m.options.by_value.empty())
      out += small_multiples(m, total.function, range, scale);
  }

  out += callers_section(m, total);

  if (o.values) {
    std::string items;
    for (std::size_t v = 0; v < total.values.size() && v < f.values.size(); v++)
      if (std::string line = value_summary(f.values[v], total.values[v], o.top_values); !line.empty())
        items += "<li>" + code(line) + "</li>";
    if (!items.empty()) out += "<h3>Values</h3><ul class=\"values\">" + items + "</ul>";
  }
  return out + "</section>";
}

}  // namespace

std::string render_html_report(const ReportModel& m, const TextReportOptions& o,
                               const std::vector<CallTimeline>& timelines) {
  const std::vector<std::size_t> order = sort_order(m, m.totals, o.sort);
  std::vector<bool> has_section(m.functions.functions.size(), false);
  for (std::size_t i = 0; i < order.size() && i < kMaxPlottedFunctions; ++i) has_section[m.totals[order[i]].function] = true;

  std::string body = "<main>" + header(m);
  body += "<h3>Latency by " + text(m.groups.size() == m.totals.size() ? "function" : "group") + "</h3>";
  body += summary_table(m, o, has_section);
  if (order.size() > kMaxPlottedFunctions)
    body += "<p class=\"muted\">Plots for the first " + std::to_string(kMaxPlottedFunctions) + " of " +
            with_commas(order.size()) + " functions, in the table's order; the table lists them all.</p>";
  for (std::size_t i = 0; i < order.size() && i < kMaxPlottedFunctions; ++i) {
    const GroupStats& total = m.totals[order[i]];
    const CallTimeline* tl = total.function < timelines.size() ? &timelines[total.function] : nullptr;
    body += function_section(m, o, total, tl);
  }
  body += "<footer>uprof " UPROF_VERSION " · one file: no script, nothing fetched; hover a bar or a dot for its figures.</footer></main>";
  const std::string title = "uprof report: " + (m.meta.command.empty() ? m.path : join_command(m.meta.command));
  return html_page(title, body, m.stacks ? kFlameCss : "");
}

}  // namespace uprof
