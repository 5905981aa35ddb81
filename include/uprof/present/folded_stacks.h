// `uprof report --format folded`: one line per distinct stack of a probed function, its
// callers outermost first, then the function, then the stack's weight (--weight: calls,
// latency in ns (the default), on-cpu or off-cpu ns), as Brendan Gregg's stackcollapse
// scripts write them, for flamegraph.pl, speedscope, Perfetto and inferno:
//
//   __libc_start_call_main;main;sleeper;work 1062731442
//   __libc_start_call_main;main;spinner;work 1003516007
//
// A function's lines add up to its calls' total (calls without a stack are the line
// "[no stack];work"). A name's ';' would split a frame: it is written ':'.
#pragma once

#include <string>
#include <string_view>

#include "uprof/analyse/call_stacks.h"
#include "uprof/analyse/report_model.h"

namespace uprof {

// What a stack format needs of the recording: stacks (record -g), and off-CPU times for
// the on-cpu and off-cpu weights (record --off-cpu). `format` names it in the message.
Status check_stack_format(const ReportModel& m, StackWeight w, std::string_view format);

// The name a frame has in a stack line: `;` and line ends replaced.
std::string stack_frame_text(std::string_view name);

std::string render_folded(const ReportModel& m, StackWeight w);

}  // namespace uprof
