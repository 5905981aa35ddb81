#include "uprof/present/svg_flame.h"

#include <algorithm>
#include <cstdio>

#include "uprof/present/caller_text.h"
#include "uprof/present/markup.h"
#include "uprof/present/plot_axes.h"
#include "uprof/util/thousands.h"

namespace uprof {

const char* const kFlameCss = R"css(
svg.flame rect { stroke: #fff; stroke-width: .5; }
svg.flame .fl-on { fill: #e8743b; }
svg.flame .fl-off { fill: #5b8fd6; }
svg.flame .fl-all { fill: #e2a04a; }
svg.flame .fl-root { fill: #9aa3b2; }
svg.flame g:hover rect { fill-opacity: .8; }
svg.flame text { font-size: 11px; fill: #1c2330; pointer-events: none; }
)css";

namespace {

FlameNode& child(FlameNode& n, const std::string& name) {
  for (FlameNode& c : n.children)
    if (c.name == name) return c;
  n.children.push_back(FlameNode{.name = name, .w = {}, .children = {}});
  return n.children.back();
}

void sort_tree(FlameNode& n) {
  std::stable_sort(n.children.begin(), n.children.end(),
                   [](const FlameNode& a, const FlameNode& b) { return a.w.latency_ns > b.w.latency_ns; });
  for (FlameNode& c : n.children) sort_tree(c);
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

struct Drawer {
  const FlamePlot& plot;
  uint64_t root_latency;
  std::string out;
  std::size_t deepest = 0;
  bool cut = false;

  void draw(const FlameNode& n, double x, double w, std::size_t depth) {
    if (w < plot.min_frame_width) return;
    if (depth >= plot.max_depth) {
      cut = true;
      return;
    }
    deepest = std::max(deepest, depth + 1);
    const double y = static_cast<double>(depth) * plot.row_height, h = plot.row_height;
    std::string title = n.name + ": " + with_commas(n.w.calls) + (n.w.calls == 1 ? " call, " : " calls, ") +
                        plot_duration(n.w.latency_ns) + " (" + share_text(n.w.latency_ns, root_latency) + ")";
    if (n.w.cpu.recorded()) title += "; " + cpu_split_text(n.w.cpu);
    out += "<g data-name=\"" + escape_markup(n.name) + "\" data-calls=\"" + std::to_string(n.w.calls) +
           "\" data-latency-ns=\"" + std::to_string(n.w.latency_ns) + "\"";
    if (n.w.cpu.recorded())
      out += " data-on-cpu-ns=\"" + std::to_string(n.w.cpu.on_cpu_ns) + "\" data-off-cpu-ns=\"" +
             std::to_string(n.w.cpu.off_cpu_ns()) + "\"";
    out += "><title>" + escape_markup(title) + "</title>";
    auto rect = [&](double rx, double rw, const char* cls) {
      out += "<rect class=\"" + std::string(cls) + "\" x=\"" + num(rx) + "\" y=\"" + num(y) + "\" width=\"" +
             num(rw) + "\" height=\"" + num(h) + "\"/>";
    };
    if (plot.split && n.w.cpu.recorded()) {
      const double on = w * n.w.cpu.on_cpu_fraction();
      if (on > 0) rect(x, on, "fl-on");
      if (w - on > 0) rect(x + on, w - on, "fl-off");
    } else {
      rect(x, w, depth == 0 ? "fl-root" : "fl-all");
    }
    // As much of the name as fits, at about 6.5 px a character.
    const auto fits = static_cast<std::size_t>((w - 6) / 6.5);
    if (fits >= 3) {
      std::string label = n.name.size() <= fits ? n.name : n.name.substr(0, fits - 2) + "..";
      out += "<text x=\"" + num(x + 3) + "\" y=\"" + num(y + h - 5) + "\">" + escape_markup(label) + "</text>";
    }
    out += "</g>";
    double cx = x;
    for (const FlameNode& c : n.children) {
      const double cw = root_latency ? w * static_cast<double>(c.w.latency_ns) / static_cast<double>(std::max<uint64_t>(n.w.latency_ns, 1)) : 0;
      draw(c, cx, cw, depth + 1);
      cx += cw;
    }
  }
};

}  // namespace

FlameNode caller_tree(const CallStacks& stacks, uint32_t function, const std::string& name) {
  FlameNode root{.name = name, .w = {}, .children = {}};
  for (const NamedStack& s : stacks.stacks) {
    if (s.function != function) continue;
    root.w.merge(s.w);
    FlameNode* n = &root;
    // Callers innermost first: the frames are outermost first.
    for (auto f = s.frames.rbegin(); f != s.frames.rend(); ++f) {
      n = &child(*n, *f);
      n->w.merge(s.w);
    }
  }
  sort_tree(root);
  return root;
}

std::string flame_svg(const FlameNode& root, const FlamePlot& plot) {
  Drawer d{.plot = plot, .root_latency = root.w.latency_ns, .out = {}};
  if (root.w.latency_ns) d.draw(root, 0, plot.width, 0);
  const double height = static_cast<double>(std::max<std::size_t>(d.deepest, 1)) * plot.row_height;
  std::string svg = "<svg class=\"flame\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(plot.width) +
                    "\" height=\"" + num(height) + "\" viewBox=\"0 0 " + num(plot.width) + " " + num(height) +
                    "\" role=\"img\" aria-label=\"" + escape_markup(plot.label) + "\">" + d.out + "</svg>";
  if (d.cut)
    svg += "<p class=\"muted\">Callers deeper than " + std::to_string(plot.max_depth) + " frames are left out.</p>";
  return svg;
}

}  // namespace uprof
