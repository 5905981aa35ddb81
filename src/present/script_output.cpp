#include "uprof/present/script_output.h"

#include <fnmatch.h>

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "uprof/analyse/aggregate.h"
#include "uprof/analyse/duration_format.h"
#include "uprof/analyse/pairing.h"
#include "uprof/present/json_writer.h"
#include "uprof/present/report_text.h"
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

// Remembers what the pairer said about the event being processed.
struct Capture final : PairingSink {
  std::optional<Call> call;
  std::vector<Unmatched> unmatched;
  std::unordered_map<uint64_t, std::string> comms;  // (pid << 32 | tid) -> name
  std::vector<uint64_t> call_values;                // copies: spans die with the callback
  std::size_t call_entry_count = 0;                 // call_values[0, n) are the entry's
  std::vector<std::vector<uint64_t>> unmatched_values;

  static uint64_t key(uint32_t pid, uint32_t tid) { return (uint64_t{pid} << 32) | tid; }
  void on_call(const Call& c) override {
    call = c;
    call_values.assign(c.entry_values.begin(), c.entry_values.end());
    call_entry_count = c.entry_values.size();
    call_values.insert(call_values.end(), c.return_values.begin(), c.return_values.end());
  }
  void on_unmatched(const Unmatched& u) override {
    unmatched.push_back(u);
    unmatched_values.emplace_back(u.values.begin(), u.values.end());
  }
  void on_hit(const Hit&) override {}
  void on_comm(uint32_t pid, uint32_t tid, std::string_view comm) override { comms[key(pid, tid)] = comm; }
  void on_fork(uint32_t pid, uint32_t tid, uint32_t ppid, uint32_t ptid) override {
    auto it = comms.find(key(ppid, ptid));
    if (it != comms.end() && !comms.count(key(pid, tid))) comms[key(pid, tid)] = it->second;
  }
  std::string comm(uint32_t pid, uint32_t tid) const {
    auto it = comms.find(key(pid, tid));
    if (it != comms.end()) return it->second;
    it = comms.find(key(pid, pid));  // a thread not yet named has its process's name
    return it != comms.end() ? it->second : std::to_string(pid);
  }
};

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
    case ValueKind::Enum:
    case ValueKind::Char:
    case ValueKind::Float:
    case ValueKind::Struct: w.value(value_text(specs, vals, missing, i).text); return;
    default:
      if (s.is_signed) w.value(static_cast<int64_t>(v));
      else w.value(v);
  }
}

void values_members(JsonWriter& w, std::span<const ValueSpec> specs, std::span<const uint64_t> vals, uint32_t missing) {
  for (std::size_t i = 0; i < specs.size() && i < vals.size();) {
    w.key(specs[i].name);
    value_json(w, specs, vals, missing, i);
    i += value_text(specs, vals, missing, i).slots;
  }
}

void values_json(JsonWriter& w, std::span<const ValueSpec> specs, std::span<const uint64_t> vals, uint32_t missing) {
  w.begin_object();
  values_members(w, specs, vals, missing);
  w.end_object();
}

}  // namespace

Status write_script(const std::string& path, const ScriptOptions& opts, std::ostream& out, std::ostream& problems) {
  UPROF_ASSIGN(DataFileReader reader, DataFileReader::open(path));
  const auto& probes = reader.probes();
  ProbeFunctions functions = group_probes(probes);
  uint64_t start = reader.meta().start_monotonic_ns;
  const auto& f = opts.filter;
  std::optional<uint64_t> since, until;
  if (f.since) since = start + *f.since;
  if (f.until) until = start + *f.until;

  Pairer pairer(functions);
  Capture cap;
  auto admitted = [&](uint32_t pid, uint32_t tid, uint64_t time, const std::string& fn) {
    if (!f.pids.empty() && std::find(f.pids.begin(), f.pids.end(), pid) == f.pids.end()) return false;
    if (!f.tids.empty() && std::find(f.tids.begin(), f.tids.end(), tid) == f.tids.end()) return false;
    if (since && time < *since) return false;
    if (until && time >= *until) return false;
    if (!f.comms.empty()) {
      std::string c = cap.comm(pid, tid);
      if (std::none_of(f.comms.begin(), f.comms.end(), [&](auto& g) { return fnmatch(g.c_str(), c.c_str(), 0) == 0; }))
        return false;
    }
    if (!f.functions.empty() && std::none_of(f.functions.begin(), f.functions.end(), [&](auto& g) {
          return fnmatch(g.c_str(), fn.c_str(), 0) == 0;
        }))
      return false;
    return true;
  };

  bool chrome = opts.format == ScriptFormat::Chrome;
  bool first_chrome = true;
  auto chrome_event = [&](JsonWriter& w) {
    out << (first_chrome ? "\n" : ",\n") << w.str();
    first_chrome = false;
  };
  auto us = [&](uint64_t t) { return static_cast<double>(t >= start ? t - start : 0) / 1000.0; };
  // Unmatched entries the pairer just reported, as instant events on their thread.
  auto chrome_unmatched = [&] {
    for (const Unmatched& u : cap.unmatched) {
      const FunctionInfo& fi = functions.functions[u.function];
      if (!admitted(u.pid, u.tid, u.time, fi.name)) continue;
      JsonWriter w;
      w.begin_object();
      w.field("name", fi.name + " (unmatched: " + std::string(to_string(u.reason)) + ")");
      w.field("cat", "unmatched");
      w.field("ph", "i");
      w.field("s", "t");
      w.field("ts", us(u.time));
      w.field("pid", u.pid);
      w.field("tid", u.tid);
      w.end_object();
      chrome_event(w);
    }
  };
  auto thread_prefix = [&](uint64_t t, uint32_t pid, uint32_t tid) {
    return seconds(t, start) + "  " + cap.comm(pid, tid) + " " + std::to_string(pid) + "/" + std::to_string(tid) + "  ";
  };
  // Calls that never returned, as the pairer gives up on them: with their arguments.
  auto text_unmatched = [&] {
    for (std::size_t k = 0; k < cap.unmatched.size(); k++) {
      const Unmatched& u = cap.unmatched[k];
      const FunctionInfo& fi = functions.functions[u.function];
      if (u.reason == UnmatchedReason::ReturnWithoutEntry || !admitted(u.pid, u.tid, u.time, fi.name)) continue;
      const ProbeInfo& p = probes[u.probe];
      out << thread_prefix(u.time, u.pid, u.tid) << call_name(fi.name) << "("
          << values_list(p.values, cap.unmatched_values[k], u.missing, 0, p.values.size()) << ")  <no return: "
          << to_string(u.reason) << ">\n";
    }
    cap.unmatched.clear();
    cap.unmatched_values.clear();
  };
  if (chrome) out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  std::unordered_map<uint64_t, std::string> named_tracks;

  Event e;
  while (reader.next(e)) {
    cap.call.reset();
    cap.unmatched.clear();
    cap.unmatched_values.clear();
    pairer.add(e, cap);

    if (chrome) {
      if (e.kind == EventKind::Sample || e.kind == EventKind::Comm) {
        std::string name = cap.comm(e.pid, e.tid);
        auto k = Capture::key(e.pid, e.tid);
        if (named_tracks[k] != name) {
          named_tracks[k] = name;
          JsonWriter w;
          w.begin_object();
          w.field("name", "thread_name");
          w.field("ph", "M");
          w.field("pid", e.pid);
          w.field("tid", e.tid);
          w.key("args");
          w.begin_object();
          w.field("name", name + " " + std::to_string(e.tid));
          w.end_object();
          w.end_object();
          chrome_event(w);
        }
      }
      if (cap.call) {
        const Call& c = *cap.call;
        const FunctionInfo& fi = functions.functions[c.function];
        if (admitted(c.pid, c.tid, c.entry_time, fi.name)) {
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
          std::span<const ValueSpec> specs(fi.values);
          std::span<const uint64_t> vals(cap.call_values);
          // The arguments and the return value side by side, as one object.
          w.begin_object();
          values_members(w, specs.first(fi.return_values_at), vals.first(cap.call_entry_count), c.entry_missing);
          values_members(w, specs.subspan(fi.return_values_at), vals.subspan(cap.call_entry_count), c.return_missing);
          w.end_object();
          w.end_object();
          chrome_event(w);
        }
      }
      chrome_unmatched();
      if (e.kind == EventKind::Lost) {
        JsonWriter w;
        w.begin_object();
        w.field("name", std::to_string(e.lost) + " samples lost");
        w.field("cat", "lost");
        w.field("ph", "i");
        w.field("s", "g");
        w.field("ts", us(e.time));
        w.field("pid", 0);
        w.field("tid", 0);
        w.end_object();
        chrome_event(w);
      }
      continue;
    }

    if (opts.format == ScriptFormat::Text) text_unmatched();
    if (e.kind == EventKind::Sample) {
      const ProbeInfo& p = probes[e.probe];
      const FunctionInfo& fi = functions.functions[functions.function_of_probe[e.probe]];
      const std::string& fname = fi.name;
      bool is_ret = p.kind == ProbeKind::Return;
      std::span<const uint64_t> vals(e.values.data(), e.nvalues);
      if (opts.format == ScriptFormat::Text) {
        // A paired function prints one line per call, when it returns:
        // `add(a=1, b=10) = 11  [1.2 us]`, stamped with the entry's time.
        if (!is_ret && fi.paired()) continue;
        uint64_t t = is_ret && cap.call ? cap.call->entry_time : e.time;
        if (!admitted(e.pid, e.tid, t, fname)) continue;
        std::string line = thread_prefix(t, e.pid, e.tid);
        if (is_ret && cap.call) {
          const Call& c = *cap.call;
          std::span<const ValueSpec> specs(fi.values);
          std::span<const uint64_t> cv(cap.call_values);
          line += call_name(fname) + "(" + values_list(specs.first(fi.return_values_at), cv.first(cap.call_entry_count),
                                             c.entry_missing, 0, fi.return_values_at) + ")" +
                  return_text(specs.subspan(fi.return_values_at), cv.subspan(cap.call_entry_count), c.return_missing) +
                  "  [" +
                  format_duration(c.duration) + "]";
        } else if (is_ret) {
          line += fname + "%return" + return_text(p.values, vals, e.missing);
        } else {
          line += call_name(fname) + "(" + values_list(p.values, vals, e.missing, 0, p.values.size()) + ")";
        }
        out << line << "\n";
      } else {
        if (!admitted(e.pid, e.tid, e.time, fname)) continue;
        JsonWriter w;
        w.begin_object();
        w.field("time_ns", e.time);
        w.field("time_s", static_cast<double>(e.time - std::min(e.time, start)) / 1e9);
        w.field("comm", cap.comm(e.pid, e.tid));
        w.field("pid", e.pid);
        w.field("tid", e.tid);
        w.field("event", is_ret ? "return" : "entry");
        w.field("function", fname);
        w.key("values");
        values_json(w, p.values, vals, e.missing);
        if (is_ret && cap.call) w.field("duration_ns", cap.call->duration);
        w.end_object();
        out << w.str() << "\n";
      }
    } else if (e.kind == EventKind::Lost) {
      if (opts.format == ScriptFormat::Text) out << seconds(e.time, start) << "  LOST " << e.lost << " samples\n";
      else out << "{\"time_ns\":" << e.time << ",\"event\":\"lost\",\"lost\":" << e.lost << "}\n";
    }
  }
  pairer.finish(cap);
  if (opts.format == ScriptFormat::Text) text_unmatched();
  if (chrome) {
    chrome_unmatched();
    out << "\n]}\n";
  }
  for (const auto& p : reader.problems()) problems << "uprof: " << path << ": " << p << "\n";
  return ok();
}

}  // namespace uprof
