// `uprof script --format chrome`: a Chrome trace-event document that Perfetto UI
// and chrome://tracing open. Each thread is a track named "comm tid" (renamed when
// its name changes); a paired call is a complete "X" event on it with its arguments
// and return value as args; unmatched entries are thread-scoped instant events and
// lost samples global ones.
//   {"name":"f","cat":"call","ph":"X","ts":1,"dur":2,"pid":10,"tid":10,"args":{"len":5,"$retval":55}}
#include <unordered_map>

#include "script_sinks.h"

namespace uprof {
namespace {

class ChromeSink final : public ScriptSink {
 public:
  explicit ChromeSink(const ScriptContext& ctx) : ctx_(ctx) {
    ctx_.out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  }

  void on_thread(uint32_t pid, uint32_t tid, std::string_view comm) override {
    std::string name = shown_comm(comm, pid);
    std::string& named = named_tracks_[(uint64_t{pid} << 32) | tid];
    if (named == name) return;
    named = name;
    JsonWriter w;
    w.begin_object();
    w.field("name", "thread_name");
    w.field("ph", "M");
    w.field("pid", pid);
    w.field("tid", tid);
    w.key("args");
    w.begin_object();
    w.field("name", name + " " + std::to_string(tid));
    w.end_object();
    w.end_object();
    emit(w.str());
  }
  void on_call(const Call& c, std::string_view) override {
    const FunctionInfo& fi = ctx_.functions.functions[c.function];
    std::span<const ValueSpec> specs(fi.values);
    JsonWriter w;
    w.begin_object();
    w.field("name", fi.name);
    w.field("cat", "call");
    w.field("ph", "X");
    w.field("ts", us(c.entry_time));
    w.field("dur", static_cast<double>(c.duration) / 1000.0);
    w.field("pid", c.pid);
    w.field("tid", c.tid);
    w.key("args");
    // The arguments and the return value side by side, as one object.
    w.begin_object();
    values_members(w, specs.first(fi.return_values_at), c.entry_values, c.entry_missing);
    values_members(w, specs.subspan(fi.return_values_at), c.return_values, c.return_missing);
    w.end_object();
    w.end_object();
    emit(w.str());
  }
  // Held until the event's call is out: an unwound frame comes after the call
  // whose return unwound it, as it always has in this format.
  void on_unmatched(const Unmatched& u, std::string_view) override {
    JsonWriter w;
    w.begin_object();
    const std::string& name = ctx_.functions.functions[u.function].name;
    w.field("name", name + " (unmatched: " + std::string(to_string(u.reason)) + ")");
    w.field("cat", "unmatched");
    w.field("ph", "i");
    w.field("s", "t");
    w.field("ts", us(u.time));
    w.field("pid", u.pid);
    w.field("tid", u.tid);
    w.end_object();
    unmatched_.push_back(w.str());
  }
  void on_paired() override {
    for (const std::string& u : unmatched_) emit(u);
    unmatched_.clear();
  }
  void on_lost(const Event& e) override {
    JsonWriter w;
    w.begin_object();
    w.field("name", (e.lost ? std::to_string(e.lost) : std::string("some")) + " samples lost");
    w.field("cat", "lost");
    w.field("ph", "i");
    w.field("s", e.tid ? "t" : "g");  // one thread's loss, or any thread's
    w.field("ts", us(e.time));
    w.field("pid", e.pid);
    w.field("tid", e.tid);
    w.end_object();
    emit(w.str());
  }
  void close() override { ctx_.out << "\n]}\n"; }

 private:
  // Microseconds since the recording's start: the format's unit.
  double us(uint64_t t) const { return static_cast<double>(t >= ctx_.start ? t - ctx_.start : 0) / 1000.0; }
  void emit(const std::string& event) {
    ctx_.out << (first_ ? "\n" : ",\n") << event;
    first_ = false;
  }

  ScriptContext ctx_;
  bool first_ = true;
  std::unordered_map<uint64_t, std::string> named_tracks_;  // (pid << 32 | tid) -> the name its track has
  std::vector<std::string> unmatched_;                      // of the current event
};

}  // namespace

std::unique_ptr<ScriptSink> make_chrome_sink(const ScriptContext& ctx) { return std::make_unique<ChromeSink>(ctx); }

}  // namespace uprof
