// `uprof script` as text, like `perf script`: one line per call, stamped with its
// entry's time; hits, unmatched entries and losses; all in the order of their times.
//   0.000012345  workload 4242/4242  add(%di=1, %si=10) = 11  [756ns]
//   0.000013101  workload 4242/4243  parse(len=4)  <no return: thread exited>
#include <cstdio>
#include <set>

#include "script_sinks.h"
#include "uprof/analyse/duration_format.h"
#include "uprof/present/ordered_lines.h"
#include "uprof/present/value_text.h"

namespace uprof {
namespace {

std::string seconds(uint64_t t, uint64_t start) {
  char buf[32];
  uint64_t d = t >= start ? t - start : 0;
  std::snprintf(buf, sizeof buf, "%llu.%09llu", static_cast<unsigned long long>(d / 1000000000ull),
                static_cast<unsigned long long>(d % 1000000000ull));
  return buf;
}

// "ns::Klass::add(long, int)" -> "ns::Klass::add": a call line shows the
// arguments themselves in the parentheses.
std::string call_name(const std::string& name) {
  if (name.empty() || name.back() != ')') return name;
  int depth = 0;
  for (std::size_t i = name.size(); i-- > 0;) {
    if (name[i] == ')') depth++;
    else if (name[i] == '(' && --depth == 0) return i > 0 ? name.substr(0, i) : name;
  }
  return name;
}

// The return side of a call line: " = 11", or " = {x=5, y=2}", then any other
// values the return probe captured.
std::string return_text(std::span<const ValueSpec> specs, std::span<const uint64_t> vals, uint32_t missing) {
  std::string ret, others;
  for (std::size_t i = 0; i < specs.size();) {
    ValueText v = value_text(specs, vals, missing, i);
    if (v.name == "$retval" && ret.empty()) ret = " = " + v.text;
    else others += (others.empty() ? "" : ", ") + v.name + "=" + v.text;
    i += v.slots;
  }
  return ret + (others.empty() ? "" : "  {" + others + "}");
}

// Lines are written in the order of the times they show (present/ordered_lines.h):
// a call's line, known at its return, waits until no call open before it can still
// produce an earlier one. A call that stays open while more than kHeldLines lines wait
// behind it (main, a server's loop) is written in two lines instead: its entry at its
// entry's time, `main(argc=2) ...`, and its return at the return's time,
// `main%return = 0  [5.20s]`; so memory stays bounded whatever is probed.
class TextSink final : public ScriptSink {
 public:
  explicit TextSink(const ScriptContext& ctx) : ctx_(ctx) {}

  void attach(const EventLoop& loop) override { loop_ = &loop; }

  // A paired function prints one line per call: `add(a=1, b=10) = 11  [1.2 us]`,
  // stamped with the entry's time.
  void on_call(const Call& c, std::string_view comm) override {
    const FunctionInfo& fi = ctx_.functions.functions[c.function];
    std::span<const ValueSpec> specs(fi.values);
    const std::string ret = return_text(specs.subspan(fi.return_values_at), c.return_values, c.return_missing) +
                            "  [" + format_duration(c.duration) + "]\n";
    if (opened_.erase({c.tid, c.entry_time})) {
      push(c.return_time, prefix(c.return_time, c.pid, c.tid, comm) + call_name(fi.name) + "%return" + ret);
      return;
    }
    push(c.entry_time, prefix(c.entry_time, c.pid, c.tid, comm) + call_name(fi.name) + "(" +
                           values_list(specs.first(fi.return_values_at), c.entry_values, c.entry_missing, 0,
                                       fi.return_values_at) +
                           ")" + ret);
  }
  // Calls that never returned, as the pairer gives up on them: with their
  // arguments. A return without its entry shows as the return probe's hit.
  void on_unmatched(const Unmatched& u, std::string_view comm) override {
    const ProbeInfo& p = ctx_.probes[u.probe];
    const std::string& name = ctx_.functions.functions[u.function].name;
    if (u.reason == UnmatchedReason::ReturnWithoutEntry || u.reason == UnmatchedReason::ReturnAfterLoss) {
      const char* why = u.reason == UnmatchedReason::ReturnAfterLoss ? "  <not paired: events lost>" : "";
      push(u.time,
           prefix(u.time, u.pid, u.tid, comm) + name + "%return" + return_text(p.values, u.values, u.missing) + why + "\n");
      return;
    }
    const std::string why = "  <no return: " + std::string(to_string(u.reason)) + ">\n";
    if (opened_.erase({u.tid, u.time})) {  // its entry is written: say so when it was given up
      const uint64_t now = loop_ ? loop_->now() : u.time;
      push(now, prefix(now, u.pid, u.tid, comm) + call_name(name) + "%return" + why);
      return;
    }
    push(u.time, prefix(u.time, u.pid, u.tid, comm) + call_name(name) + "(" +
                     values_list(p.values, u.values, u.missing, 0, p.values.size()) + ")" + why);
  }
  // Probes that do not pair: `main()`, `parse+0x10(%ax=3)`, `read%return = 4`.
  void on_hit(const Hit& h, std::string_view comm) override {
    const ProbeInfo& p = ctx_.probes[h.probe];
    const std::string& name = ctx_.functions.functions[h.function].name;
    std::string line = prefix(h.time, h.pid, h.tid, comm);
    if (p.kind != ProbeKind::Entry) line += name + "%return" + return_text(p.values, h.values, h.missing);
    else line += call_name(name) + "(" + values_list(p.values, h.values, h.missing, 0, p.values.size()) + ")";
    push(h.time, line + "\n");
  }
  void on_lost(const Event& e) override {
    // Of every thread (a perf ring), or of one (the BPF engine's mark on its next record).
    const std::string whose = e.tid ? " of " + std::to_string(e.pid) + "/" + std::to_string(e.tid) : "";
    // 0: a ring that may have dropped, whose count the kernel could not give (engine/perf/ring_loss_watch.h).
    const std::string count = e.lost ? std::to_string(e.lost) : "some";
    push(e.time, seconds(e.time, ctx_.start) + "  LOST " + count + " samples" + whose + "\n");
  }
  void on_paired() override {
    if (lines_.size() >= release_at_) release();
  }
  void close() override { lines_.release_all(ctx_.out); }

 private:
  static constexpr std::size_t kHeldLines = 1 << 16;  // ~6 MB of lines
  static constexpr std::size_t kBatch = 1024;         // lines between two looks at the open calls

  void push(uint64_t time, std::string line) { lines_.push(time, std::move(line)); }

  // Whether an open call can still produce a line before the ones held: it is not
  // written yet and the filters keep it.
  bool holds_back(const OpenFrame& f) const {
    return !opened_.count({f.tid, f.time}) && loop_->admits(f.function, f.pid, f.tid, f.time);
  }
  uint64_t watermark() const {
    uint64_t w = loop_->now();
    for (const OpenFrame& f : frames_)
      if (holds_back(f) && f.time < w) w = f.time;
    return w;
  }
  void release() {
    if (!loop_) return;  // no loop to ask: everything waits for close()
    loop_->pairer().open_frames(frames_);
    lines_.release_through(watermark(), ctx_.out);
    if (lines_.size() > kHeldLines) {
      // The calls open since before the earliest line held: their entries now.
      const uint64_t earliest = *lines_.earliest();
      for (const OpenFrame& f : frames_) {
        if (f.time > earliest || !holds_back(f)) continue;
        const FunctionInfo& fi = ctx_.functions.functions[f.function];
        const ProbeInfo& p = ctx_.probes[f.probe];
        const std::string_view comm = loop_->names().name(f.pid, f.tid);
        push(f.time, prefix(f.time, f.pid, f.tid, comm) + call_name(fi.name) + "(" +
                         values_list(p.values, f.values, f.missing, 0, p.values.size()) + ") ...\n");
        opened_.insert({f.tid, f.time});
      }
      lines_.release_through(watermark(), ctx_.out);
    }
    release_at_ = lines_.size() + kBatch;
  }
  std::string prefix(uint64_t t, uint32_t pid, uint32_t tid, std::string_view comm) const {
    return seconds(t, ctx_.start) + "  " + shown_comm(comm, pid) + " " + std::to_string(pid) + "/" +
           std::to_string(tid) + "  ";
  }

  ScriptContext ctx_;
  const EventLoop* loop_ = nullptr;
  OrderedLines lines_;
  std::size_t release_at_ = kBatch;
  std::vector<OpenFrame> frames_;
  std::set<std::pair<uint32_t, uint64_t>> opened_;  // (tid, entry time) of calls whose entry is written
};

}  // namespace

std::unique_ptr<ScriptSink> make_text_sink(const ScriptContext& ctx) { return std::make_unique<TextSink>(ctx); }

}  // namespace uprof
