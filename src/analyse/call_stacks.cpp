#include "uprof/analyse/call_stacks.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

namespace uprof {

namespace {

void append(std::string& key, const void* p, std::size_t n) { key.append(static_cast<const char*>(p), n); }

void append_frame(std::string& key, const StackFrame& f) {
  append(key, &f.object, sizeof f.object);
  append(key, &f.offset, sizeof f.offset);
}

}  // namespace

void StackWeights::add(uint64_t duration, const Call& c) {
  ++calls;
  latency_ns += duration;
  if (c.has_offcpu) cpu.add(duration, c.offcpu);
}

void StackWeights::merge(const StackWeights& o) {
  calls += o.calls;
  latency_ns += o.latency_ns;
  cpu.merge(o.cpu);
}

std::string_view to_string(StackWeight w) {
  switch (w) {
    case StackWeight::Calls: return "calls";
    case StackWeight::Latency: return "latency";
    case StackWeight::OnCpu: return "on-cpu";
    case StackWeight::OffCpu: return "off-cpu";
  }
  return "?";
}

Result<StackWeight> parse_stack_weight(std::string_view s) {
  for (StackWeight w : {StackWeight::Calls, StackWeight::Latency, StackWeight::OnCpu, StackWeight::OffCpu})
    if (s == to_string(w)) return w;
  return err("--weight takes calls, latency, on-cpu or off-cpu, not '", s, "'");
}

uint64_t weight_of(const StackWeights& w, StackWeight which) {
  switch (which) {
    case StackWeight::Calls: return w.calls;
    case StackWeight::Latency: return w.latency_ns;
    case StackWeight::OnCpu: return w.cpu.on_cpu_ns;
    case StackWeight::OffCpu: return w.cpu.off_cpu_ns();
  }
  return 0;
}

std::vector<std::size_t> CallStacks::callers_of(uint32_t function) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < callers.size(); ++i)
    if (callers[i].function == function) out.push_back(i);
  return out;
}

void StackCollector::add(uint32_t function, const Call& c, uint64_t duration) {
  ++calls_;
  without_stack_ += c.stack.empty();
  // The call site: frame 0, or none.
  key_.clear();
  append(key_, &function, sizeof function);
  if (!c.stack.empty()) append_frame(key_, c.stack[0]);
  Site& site = sites_[key_];
  if (!site.w.calls) {
    site.function = function;
    site.has_frame = !c.stack.empty();
    if (site.has_frame) site.frame = c.stack[0];
  }
  site.latency.record(duration);
  site.w.add(duration, c);
  // The whole stack.
  for (std::size_t i = 1; i < c.stack.size(); ++i) append_frame(key_, c.stack[i]);
  auto it = stacks_.find(key_);
  if (it == stacks_.end()) {
    if (stacks_.size() >= max_stacks_) {
      ++over_limit_;
      key_.resize(sizeof function);
      key_ += '+';  // no frame's bytes are one byte long: this key is no stack's
      it = stacks_.try_emplace(key_, Raw{.function = function, .frames = {}, .w = {}}).first;
    } else {
      it = stacks_.emplace(key_, Raw{.function = function, .frames = {c.stack.begin(), c.stack.end()}, .w = {}}).first;
    }
  }
  it->second.w.add(duration, c);
}

CallStacks StackCollector::finish(FrameSymbolizer& names) const {
  CallStacks out;
  out.calls = calls_;
  out.without_stack = without_stack_;
  out.over_limit = over_limit_;
  // Stacks by their names: (function, frames) -> position in out.stacks.
  std::map<std::pair<uint32_t, std::vector<std::string>>, std::size_t> stack_at;
  for (const auto& [key, raw] : stacks_) {
    std::vector<std::string> frames;
    if (key.size() == sizeof raw.function + 1) {
      frames.push_back(kMoreStacks);
    } else if (raw.frames.empty()) {
      frames.push_back(kNoStack);
    } else {
      for (auto f = raw.frames.rbegin(); f != raw.frames.rend(); ++f) {
        const FrameName& n = names.name(*f);
        frames.insert(frames.end(), n.functions.rbegin(), n.functions.rend());
      }
    }
    auto [at, fresh] = stack_at.try_emplace({raw.function, frames}, out.stacks.size());
    if (fresh) out.stacks.push_back(NamedStack{.function = raw.function, .frames = std::move(frames), .w = {}});
    out.stacks[at->second].w.merge(raw.w);
  }
  std::map<std::pair<uint32_t, std::string>, std::size_t> caller_at;
  for (const auto& [key, site] : sites_) {
    std::string caller = site.has_frame ? names.name(site.frame).caller() : std::string(kNoStack);
    auto [at, fresh] = caller_at.try_emplace({site.function, caller}, out.callers.size());
    if (fresh) out.callers.push_back(CallerStats{.function = site.function, .caller = std::move(caller), .latency = {}, .w = {}});
    CallerStats& c = out.callers[at->second];
    c.latency.merge(site.latency);
    c.w.merge(site.w);
  }
  // Hash order is no order: by function, then most latency, then by name (stable output).
  std::sort(out.stacks.begin(), out.stacks.end(), [](const NamedStack& a, const NamedStack& b) {
    if (a.function != b.function) return a.function < b.function;
    if (a.w.latency_ns != b.w.latency_ns) return a.w.latency_ns > b.w.latency_ns;
    return a.frames < b.frames;
  });
  std::sort(out.callers.begin(), out.callers.end(), [](const CallerStats& a, const CallerStats& b) {
    if (a.function != b.function) return a.function < b.function;
    if (a.w.latency_ns != b.w.latency_ns) return a.w.latency_ns > b.w.latency_ns;
    return a.caller < b.caller;
  });
  out.problems = names.problems();
  return out;
}

void name_caller_groups(std::vector<GroupStats>& groups, FrameSymbolizer& names) {
  std::vector<GroupStats> out;
  std::map<std::tuple<uint32_t, bool, uint64_t, bool, std::string>, std::size_t> at;
  for (GroupStats& g : groups) {
    g.caller = g.has_caller ? names.name(g.caller_site).caller() : std::string();
    auto [it, fresh] =
        at.try_emplace({g.function, g.has_by_value, g.by_value, g.other_values, g.caller}, out.size());
    if (fresh) out.push_back(std::move(g));
    else out[it->second].merge(g);
  }
  groups = std::move(out);
}

}  // namespace uprof
