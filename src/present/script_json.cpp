// `uprof script --format json`: one JSON object per sample, in time order, entries
// and returns alike (a return that closed a call adds its duration), and one per loss.
//   {"time_ns":1003000,"time_s":3e-06,"comm":"server","pid":10,"tid":10,"event":"return",
//    "function":"f","values":{"$retval":55},"duration_ns":2000}
#include <algorithm>

#include "script_sinks.h"
#include "uprof/analyse/aggregate.h"
#include "uprof/model/string_value.h"
#include "uprof/present/value_text.h"

namespace uprof {
namespace {

// One value as JSON: numbers for integers, true/false, enumerator names,
// objects for structs, null for what is not known.
void value_json(JsonWriter& w, std::span<const ValueSpec> specs, std::span<const uint64_t> vals, uint32_t missing,
                std::size_t i) {
  const ValueSpec& s = specs[i];
  const bool known = i < vals.size() && (i >= 32 || !(missing >> i & 1)) && s.source != ValueSource::Unavailable;
  if (!known) {
    w.null();
    return;
  }
  const uint64_t v = normalize_value(vals[i], s);
  switch (s.kind) {
    case ValueKind::Bool: w.value(v != 0); return;
    case ValueKind::String: w.value(recorded_strings().text(v).bytes); return;
    case ValueKind::Enum:
    case ValueKind::Char:
    case ValueKind::Float:
    case ValueKind::Struct: w.value(value_text(specs, vals, missing, i).text); return;
    default:
      if (s.is_signed) w.value(static_cast<int64_t>(v));
      else w.value(v);
  }
}

class JsonLinesSink final : public ScriptSink {
 public:
  explicit JsonLinesSink(const ScriptContext& ctx) : ctx_(ctx) {}

  void on_sample(const Event& e, uint32_t function, std::optional<uint64_t> call_duration,
                 std::string_view comm) override {
    const ProbeInfo& p = ctx_.probes[e.probe];
    const bool is_ret = p.kind != ProbeKind::Entry;
    JsonWriter w;
    w.begin_object();
    w.field("time_ns", e.time);
    w.field("time_s", static_cast<double>(e.time - std::min(e.time, ctx_.start)) / 1e9);
    w.field("comm", shown_comm(comm, e.pid));
    w.field("pid", e.pid);
    w.field("tid", e.tid);
    w.field("event", is_ret ? "return" : "entry");
    w.field("function", ctx_.functions.functions[function].name);
    w.key("values");
    w.begin_object();
    values_members(w, p.values, std::span<const uint64_t>(e.values.data(), e.nvalues), e.missing);
    w.end_object();
    if (is_ret && call_duration) w.field("duration_ns", *call_duration);
    w.end_object();
    ctx_.out << w.str() << "\n";
  }
  void on_lost(const Event& e) override {
    ctx_.out << "{\"time_ns\":" << e.time << ",\"event\":\"lost\",\"lost\":" << e.lost;
    if (e.tid) ctx_.out << ",\"pid\":" << e.pid << ",\"tid\":" << e.tid;  // one thread's; else any thread's
    if (e.lost_until > e.time) ctx_.out << ",\"until_ns\":" << e.lost_until;
    ctx_.out << "}\n";
  }

 private:
  ScriptContext ctx_;
};

}  // namespace

void values_members(JsonWriter& w, std::span<const ValueSpec> specs, std::span<const uint64_t> vals, uint32_t missing) {
  for (std::size_t i = 0; i < specs.size() && i < vals.size();) {
    w.key(specs[i].name);
    value_json(w, specs, vals, missing, i);
    i += value_text(specs, vals, missing, i).slots;
  }
}

std::unique_ptr<ScriptSink> make_json_lines_sink(const ScriptContext& ctx) {
  return std::make_unique<JsonLinesSink>(ctx);
}

}  // namespace uprof
