// `uprof script` as text, like `perf script`: one line per call when it returns,
// stamped with its entry's time; hits, unmatched entries and losses as they come.
//   0.000012345  workload 4242/4242  add(%di=1, %si=10) = 11  [756ns]
//   0.000013101  workload 4242/4243  parse(len=4)  <no return: thread exited>
#include <cstdio>

#include "script_sinks.h"
#include "uprof/analyse/duration_format.h"
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

class TextSink final : public ScriptSink {
 public:
  explicit TextSink(const ScriptContext& ctx) : ctx_(ctx) {}

  // A paired function prints one line per call, when it returns:
  // `add(a=1, b=10) = 11  [1.2 us]`, stamped with the entry's time.
  void on_call(const Call& c, std::string_view comm) override {
    const FunctionInfo& fi = ctx_.functions.functions[c.function];
    std::span<const ValueSpec> specs(fi.values);
    ctx_.out << prefix(c.entry_time, c.pid, c.tid, comm) << call_name(fi.name) << "("
             << values_list(specs.first(fi.return_values_at), c.entry_values, c.entry_missing, 0, fi.return_values_at)
             << ")" << return_text(specs.subspan(fi.return_values_at), c.return_values, c.return_missing) << "  ["
             << format_duration(c.duration) << "]\n";
  }
  // Calls that never returned, as the pairer gives up on them: with their
  // arguments. A return without its entry shows as the return probe's hit.
  void on_unmatched(const Unmatched& u, std::string_view comm) override {
    const ProbeInfo& p = ctx_.probes[u.probe];
    const std::string& name = ctx_.functions.functions[u.function].name;
    ctx_.out << prefix(u.time, u.pid, u.tid, comm);
    if (u.reason == UnmatchedReason::ReturnWithoutEntry) {
      ctx_.out << name << "%return" << return_text(p.values, u.values, u.missing) << "\n";
      return;
    }
    ctx_.out << call_name(name) << "(" << values_list(p.values, u.values, u.missing, 0, p.values.size())
             << ")  <no return: " << to_string(u.reason) << ">\n";
  }
  // Probes that do not pair: `main()`, `parse+0x10(%ax=3)`, `read%return = 4`.
  void on_hit(const Hit& h, std::string_view comm) override {
    const ProbeInfo& p = ctx_.probes[h.probe];
    const std::string& name = ctx_.functions.functions[h.function].name;
    ctx_.out << prefix(h.time, h.pid, h.tid, comm);
    if (p.kind != ProbeKind::Entry) ctx_.out << name << "%return" << return_text(p.values, h.values, h.missing);
    else ctx_.out << call_name(name) << "(" << values_list(p.values, h.values, h.missing, 0, p.values.size()) << ")";
    ctx_.out << "\n";
  }
  void on_lost(const Event& e) override {
    ctx_.out << seconds(e.time, ctx_.start) << "  LOST " << e.lost << " samples\n";
  }

 private:
  std::string prefix(uint64_t t, uint32_t pid, uint32_t tid, std::string_view comm) const {
    return seconds(t, ctx_.start) + "  " + shown_comm(comm, pid) + " " + std::to_string(pid) + "/" +
           std::to_string(tid) + "  ";
  }

  ScriptContext ctx_;
};

}  // namespace

std::unique_ptr<ScriptSink> make_text_sink(const ScriptContext& ctx) { return std::make_unique<TextSink>(ctx); }

}  // namespace uprof
