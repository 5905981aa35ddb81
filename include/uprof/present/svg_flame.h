// The HTML report's flame graph of a function's callers (record -g): an icicle, the
// probed function on top across the whole width, its callers below it, theirs below
// them, each as wide as the latency of the calls that came through it, so that the
// caller whose calls are slow is the wide one:
//
//   [                        work 2.07s                         ]
//   [      sleeper 1.06s (off-CPU)    ][   spinner 1.00s (on)    ]
//   [      main                       ][   main                  ]
//
// With record --off-cpu each frame is split in two: its on-CPU part (warm) and its
// off-CPU part (blue), in proportion. Inline SVG with a <title> per frame (name, calls,
// latency, share, on/off) and data-* attributes: no script, as the rest of the page.
#pragma once

#include <string>
#include <vector>

#include "uprof/analyse/call_stacks.h"

namespace uprof {

// One frame of the caller tree: the calls that came through this chain of callers.
struct FlameNode {
  std::string name;
  StackWeights w{};
  std::vector<FlameNode> children;  // by latency, most first
};

// Pure: the caller tree of `function` from its stacks, rooted at `name` (the function).
FlameNode caller_tree(const CallStacks& stacks, uint32_t function, const std::string& name);

struct FlamePlot {
  double width = 1040;
  double row_height = 18;
  std::size_t max_depth = 40;     // rows past it are left out (the title says so)
  double min_frame_width = 0.5;   // px: narrower frames are not drawn (their parent holds them)
  bool split = false;             // draw the on/off-CPU split (record --off-cpu)
  std::string label;              // aria-label
};

std::string flame_svg(const FlameNode& root, const FlamePlot& plot);
// The page's CSS for the flame graph (html_page's extra_css).
extern const char* const kFlameCss;

}  // namespace uprof
