#include "uprof/present/script_output.h"

#include <array>

#include "script_sinks.h"
#include "uprof/analyse/event_loop.h"

namespace uprof {

namespace {

// By ScriptFormat.
constexpr std::array<std::unique_ptr<ScriptSink> (*)(const ScriptContext&), 3> kSinks = {
    make_text_sink, make_json_lines_sink, make_chrome_sink};

}  // namespace

Status write_script(const std::string& path, const ScriptOptions& opts, std::ostream& out, std::ostream& problems) {
  UPROF_ASSIGN(DataFileReader reader, DataFileReader::open(path));
  const ProbeFunctions functions = group_probes(reader.probes());
  const ScriptContext ctx{
      .out = out, .probes = reader.probes(), .functions = functions, .start = reader.meta().start_monotonic_ns};
  std::unique_ptr<ScriptSink> sink = kSinks[static_cast<std::size_t>(opts.format)](ctx);
  EventLoop loop(functions, opts.filter, ctx.start, *sink);
  sink->attach(loop);
  read_events(reader, loop);
  sink->close();
  for (const auto& p : reader.problems()) problems << "uprof: " << path << ": " << p << "\n";
  return ok();
}

}  // namespace uprof
