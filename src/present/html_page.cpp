#include "uprof/present/html_page.h"

#include "uprof/present/markup.h"

namespace uprof {

namespace {

// System fonts only: the page must not fetch one. Colours stay on paper
// (print-color-adjust), and a plot or a function's card is not split across pages.
constexpr std::string_view kStyle = R"css(
:root {
  --ink: #1c2330; --muted: #5d6677; --faint: #8a93a3; --line: #dde2ea; --bg: #f5f6f8; --card: #fff;
  --accent: #35629f; --bar: #4e79a7; --warn: #8a5300; --warn-bg: #fff5e3; --warn-edge: #e3a13b;
  --bad: #9b1c1c; --bad-bg: #fdecec; --ok: #1d6b40; --ok-bg: #e6f4ec;
}
* { box-sizing: border-box; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 28px 28px 56px; }
h1 { font-size: 24px; font-weight: 650; letter-spacing: -0.01em; margin: 0; }
h2 { font-size: 18px; font-weight: 650; margin: 0; }
h3 { font-size: 13px; font-weight: 650; color: var(--muted); text-transform: uppercase; letter-spacing: .05em;
  margin: 18px 0 6px; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
code, .mono { font-family: ui-monospace, "SF Mono", "Cascadia Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace;
  font-size: 0.9em; }
.muted { color: var(--muted); }
.lede { color: var(--muted); margin: 2px 0 0; }
header.report { margin-bottom: 8px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 3px 18px; margin: 16px 0 0;
  background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 18px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 0 8px; border-radius: 9px; font-size: 12px; font-weight: 600;
  margin-left: 6px; vertical-align: 1px; }
.badge.ok { color: var(--ok); background: var(--ok-bg); }
.badge.warn { color: var(--warn); background: var(--warn-bg); }
.badge.bad { color: var(--bad); background: var(--bad-bg); }
.note { background: var(--warn-bg); border-left: 3px solid var(--warn-edge); border-radius: 0 4px 4px 0;
  padding: 6px 10px; margin: 8px 0; font-size: 13px; }
.note.bad { background: var(--bad-bg); border-left-color: var(--bad); }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; width: 100%; }
th { text-align: left; font-weight: 600; color: var(--muted); font-size: 11.5px; text-transform: uppercase;
  letter-spacing: .04em; border-bottom: 1px solid var(--line); padding: 6px 10px; white-space: nowrap; }
td { padding: 5px 10px; border-bottom: 1px solid #eef0f4; vertical-align: top; }
tr:last-child td { border-bottom: 0; }
th.num, td.num { text-align: right; white-space: nowrap; }
.panel { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 8px 8px; margin: 18px 0;
  overflow-x: auto; }
section.fn { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 18px 22px 20px;
  margin: 20px 0; break-inside: avoid; page-break-inside: avoid; }
section.fn > header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 14px; margin-bottom: 6px; }
section.fn > header .path { color: var(--muted); font-size: 12.5px; }
.plots { display: flex; flex-wrap: wrap; gap: 10px 28px; margin-top: 10px; }
figure { margin: 0; }
figcaption { font-size: 12.5px; font-weight: 600; color: var(--ink); margin: 0 0 2px; }
figcaption .muted { font-weight: 400; }
.multiples { display: grid; grid-template-columns: repeat(auto-fill, minmax(250px, 1fr)); gap: 12px 18px; }
.multiples figcaption { font-weight: 500; overflow-wrap: anywhere; }
ul.values { margin: 4px 0 0; padding-left: 18px; }
footer { color: var(--faint); font-size: 12px; margin-top: 28px; }
svg.plot { display: block; overflow: visible; }
svg text { font-family: inherit; }
svg .tick-label { font-size: 10.5px; fill: var(--muted); }
svg .axis-title { font-size: 11px; font-weight: 600; fill: var(--muted); }
svg .grid { stroke: #e9edf2; stroke-width: 1; }
svg .grid.minor { stroke: #f3f5f8; }
svg .axis, svg .tick { stroke: var(--faint); stroke-width: 1; }
svg .bar { fill: var(--bar); }
svg .bar:hover { fill: #2c5684; }
svg .bar.zero { fill: #9aa3b2; }
svg .outline { fill: none; stroke: #d1495b; stroke-width: 1.6; }
svg .marker { stroke: var(--ink); stroke-width: 1.2; stroke-dasharray: 4 3; }
svg .marker-label { font-size: 10.5px; font-weight: 600; fill: var(--ink); stroke: none; }
svg line.m-p90 { stroke: #6b4fa0; } svg .marker-label.m-p90 { fill: #6b4fa0; }
svg line.m-p99 { stroke: #c8660a; } svg .marker-label.m-p99 { fill: #c8660a; }
svg line.m-p99_9 { stroke: #b3261e; } svg .marker-label.m-p99_9 { fill: #b3261e; }
svg.timeline .marker { stroke-opacity: .75; }
svg .pt { fill: var(--bar); fill-opacity: .55; }
svg .pt:hover { fill-opacity: 1; }
svg .pt.outlier { fill: #d1495b; fill-opacity: .95; stroke: #fff; stroke-width: .8; }
svg .swatch { stroke: none; }
@media print {
  body { background: #fff; font-size: 12px; }
  main { max-width: none; padding: 0; }
  dl.facts, .panel, section.fn { border-color: #bbb; }
  a { color: inherit; }
}
)css";

}  // namespace

std::string html_page(std::string_view title, std::string_view body, std::string_view extra_css) {
  std::string out;
  out.reserve(body.size() + kStyle.size() + 512);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"";
  out += kHtmlContentSecurityPolicy;
  out += "\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>";
  out += escape_markup(title);
  out += "</title>\n<style>";
  out += kStyle;
  out += extra_css;
  out += "</style>\n</head>\n<body>\n";
  out += body;
  out += "\n</body>\n</html>\n";
  return out;
}

std::string html_table(const HtmlTable& t) {
  std::string out = "<table" + (t.css_class.empty() ? std::string() : " class=\"" + escape_markup(t.css_class) + "\"") + ">";
  out += "<thead><tr>";
  for (const auto& c : t.columns)
    out += std::string(c.numeric ? "<th class=\"num\">" : "<th>") + escape_markup(c.header) + "</th>";
  out += "</tr></thead><tbody>";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool numeric = i < t.columns.size() && t.columns[i].numeric;
      out += std::string(numeric ? "<td class=\"num\">" : "<td>") + row[i] + "</td>";
    }
    out += "</tr>";
  }
  out += "</tbody></table>";
  return out;
}

}  // namespace uprof
