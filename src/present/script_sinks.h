// The three formats of `uprof script`, each an EventSink of the read-side loop
// (analyse/event_loop.h): text lines (script_text.cpp), JSON lines
// (script_json.cpp) and the Chrome trace-event timeline (script_chrome.cpp).
// write_script (script_output.cpp) picks one and runs the loop into it.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "uprof/analyse/event_loop.h"
#include "uprof/analyse/probe_functions.h"
#include "uprof/model/recording.h"
#include "uprof/present/json_writer.h"

namespace uprof {

struct ScriptContext {
  std::ostream& out;
  const std::vector<ProbeInfo>& probes;
  const ProbeFunctions& functions;
  uint64_t start = 0;  // RecordingMeta::start_monotonic_ns: times are shown from it
};

class ScriptSink : public EventSink {
 public:
  // Writes what comes after the last event (the end of the Chrome document).
  virtual void close() {}
  // The loop that feeds it, for a sink that orders its output and must ask what is
  // still open (the text's).
  virtual void attach(const EventLoop& /*loop*/) {}
};

std::unique_ptr<ScriptSink> make_text_sink(const ScriptContext& ctx);
std::unique_ptr<ScriptSink> make_json_lines_sink(const ScriptContext& ctx);
std::unique_ptr<ScriptSink> make_chrome_sink(const ScriptContext& ctx);

// A thread's name as script shows it: its pid when no event named it (like perf's ":4242").
inline std::string shown_comm(std::string_view comm, uint32_t pid) {
  return comm.empty() ? std::to_string(pid) : std::string(comm);
}

// The members `"len":5, "$retval":11` of one probe's values, typed as value_json
// says (script_json.cpp); the Chrome timeline puts them in a call's "args".
void values_members(JsonWriter& w, std::span<const ValueSpec> specs, std::span<const uint64_t> vals, uint32_t missing);

}  // namespace uprof
