#include "uprof/analyse/aggregate.h"

#include <algorithm>

namespace uprof {

namespace {

constexpr uint64_t kNoValueBit = uint64_t{1} << 63;   // in Key::a: the call did not capture --by
constexpr uint64_t kOtherBit = uint64_t{1} << 62;     // in Key::a: past max_value_groups
// GroupBy::Thread's id: the tid (below 2^22, the kernel's PID_MAX_LIMIT) and the
// thread's generation in the 10 bits above it (a thread renamed 1,024 times wraps).
constexpr unsigned kGenerationShift = 22;
constexpr uint32_t kGenerations = 1024;

bool value_less(uint64_t a, uint64_t b, bool is_signed) {
  return is_signed ? static_cast<int64_t>(a) < static_cast<int64_t>(b) : a < b;
}

int32_t slot_named(const FunctionInfo& f, const std::string& name) {
  if (name.empty()) return -1;
  for (std::size_t i = 0; i < f.values.size(); ++i) {
    if (f.values[i].name == name) return static_cast<int32_t>(i);
  }
  return -1;
}

}  // namespace

uint64_t normalize_value(uint64_t raw, const ValueSpec& spec) {
  if (spec.size == 0 || spec.size >= 8) return raw;
  const unsigned bits = spec.size * 8u;
  const uint64_t v = raw & ((uint64_t{1} << bits) - 1);
  if (!spec.is_signed) return v;
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return (v ^ sign) - sign;  // sign-extends: 0xfffffffe (4 bytes) -> 0xffffffff'fffffffe
}

void ValueStats::add(uint64_t normalized) {
  if (count == 0 || value_less(normalized, min, is_signed)) min = normalized;
  if (count == 0 || value_less(max, normalized, is_signed)) max = normalized;
  ++count;
  top.add(normalized);
}

void ValueStats::merge(const ValueStats& other) {
  if (other.count == 0) return;
  if (count == 0 || value_less(other.min, min, is_signed)) min = other.min;
  if (count == 0 || value_less(max, other.max, is_signed)) max = other.max;
  count += other.count;
  top.merge(other.top);
}

uint64_t GroupStats::unmatched_total() const {
  uint64_t n = 0;
  for (uint64_t u : unmatched) n += u;
  return n;
}

uint64_t GroupStats::cut_by_loss() const {
  return unmatched[static_cast<std::size_t>(UnmatchedReason::Lost)] +
         unmatched[static_cast<std::size_t>(UnmatchedReason::ReturnAfterLoss)];
}

bool GroupStats::compensation_hides(double percent) const {
  return below_compensation && latency.count() && nearest_rank(percent, latency.count()) <= below_compensation;
}

void GroupStats::merge(const GroupStats& other) {
  calls += other.calls;
  untimed += other.untimed;
  latency.merge(other.latency);
  if (linear && other.linear) (void)linear->merge(*other.linear);  // one spec per Aggregator
  nested_probe_ns += other.nested_probe_ns;
  below_compensation += other.below_compensation;
  for (std::size_t r = 0; r < kUnmatchedReasons; ++r) unmatched[r] += other.unmatched[r];
  for (std::size_t i = 0; i < values.size() && i < other.values.size(); ++i) values[i].merge(other.values[i]);
  cpu.merge(other.cpu);
}

Status check_aggregate_options(const ProbeFunctions& functions, const AggregateOptions& options) {
  const AggregateFilter& f = options.filter;
  for (const std::string& pattern : f.functions) {
    const bool any = std::any_of(functions.functions.begin(), functions.functions.end(),
                                 [&](const FunctionInfo& fn) { return glob_match(pattern, fn.name); });
    if (!any) return err("report: no probed function matches '", pattern, "'");
  }
  if (!options.by_value.empty()) {
    const auto selected = select_functions(functions.functions, f);
    std::vector<std::string> names;
    for (std::size_t i = 0; i < functions.functions.size(); ++i) {
      if (!selected[i]) continue;
      for (const ValueSpec& v : functions.functions[i].values) {
        if (std::find(names.begin(), names.end(), v.name) == names.end()) names.push_back(v.name);
      }
    }
    const bool found = std::find(names.begin(), names.end(), options.by_value) != names.end();
    std::string captured;
    for (const std::string& n : names) captured += (captured.empty() ? "" : ", ") + n;
    if (!found) {
      return err("report: --by ", options.by_value, ": no selected function captures a value of that name",
                 captured.empty() ? std::string(" (none captures any value)") : " (captured: " + captured + ")");
    }
  }
  if (f.since && f.until && *f.since >= *f.until) {
    return err("report: --since ", *f.since, "ns is not before --until ", *f.until, "ns");
  }
  return ok();
}

Aggregator::Aggregator(const ProbeFunctions& functions, AggregateOptions options)
    : functions_(functions.functions),
      first_slot_of_probe_(functions.first_slot_of_probe),
      function_of_probe_(functions.function_of_probe),
      options_(std::move(options)),
      selected_(select_functions(functions_, options_.filter)) {
  for (const FunctionInfo& f : functions_) {
    entry_probe_of_.push_back(f.entry_probe);
    by_slot_.push_back(slot_named(f, options_.by_value));
    // A USDT pair's closing half has the value under its suffix ("return:func"): a
    // return without an entry is grouped by its own.
    int32_t mirror = -1;
    if (f.usdt && by_slot_.back() >= 0 && static_cast<uint32_t>(by_slot_.back()) < f.return_values_at)
      for (std::size_t i = f.return_values_at; i < f.values.size() && mirror < 0; ++i) {
        const std::string& n = f.values[i].name;
        const std::string& want = options_.by_value;
        if (n.size() > want.size() && n.compare(n.size() - want.size(), want.size(), want) == 0 &&
            n[n.size() - want.size() - 1] == ':')
          mirror = static_cast<int32_t>(i);
      }
    by_return_slot_.push_back(mirror);
    int32_t goid = slot_named(f, std::string(kGoroutineIdValue));
    goid_slot_.push_back(goid >= 0 && static_cast<uint32_t>(goid) < f.return_values_at ? goid : -1);
  }
  // A clone's values go to the slots of its row's function that have the same name,
  // type and side (entry or return): a clone that lost a parameter to gcc (`.isra`) or
  // holds one as a constant (`.constprop`) still adds what it has.
  slot_in_row_.resize(functions_.size());
  for (uint32_t fn = 0; fn < functions_.size(); ++fn) {
    const FunctionInfo& f = functions_[fn];
    if (f.row == kNoFunction) continue;
    const FunctionInfo& r = functions_[f.row];
    for (std::size_t i = 0; i < f.values.size(); ++i) {
      const ValueSpec& v = f.values[i];
      int32_t at = -1;
      for (std::size_t j = 0; j < r.values.size() && at < 0; ++j) {
        const ValueSpec& w = r.values[j];
        if (w.name == v.name && w.type == v.type && w.kind == v.kind && w.size == v.size && w.is_signed == v.is_signed &&
            w.continues == v.continues && w.source != ValueSource::Unavailable &&
            (i < f.return_values_at) == (j < r.return_values_at))
          at = static_cast<int32_t>(j);
      }
      slot_in_row_[fn].push_back(at);
    }
  }
  keyed_ = options_.by != GroupBy::Function || !options_.by_value.empty();
  if (!keyed_) {
    group_of_function_.assign(functions_.size(), UINT32_MAX);
    for (uint32_t fn = 0; fn < functions_.size(); ++fn) {
      if (!selected_[fn]) continue;
      if (row_of(fn) != fn) {
        group_of_function_[fn] = group_of_function_[row_of(fn)];
        continue;
      }
      group_of_function_[fn] = static_cast<uint32_t>(groups_.size());
      groups_.push_back(make_group(fn));
    }
  }
}

uint32_t Aggregator::row_of(uint32_t function) const {
  const uint32_t row = functions_[function].row;
  return row != kNoFunction && selected_[row] ? row : function;
}

GroupStats Aggregator::make_group(uint32_t function) const {
  GroupStats g{.function = function};
  if (options_.linear) g.linear.emplace(*options_.linear);
  for (const ValueSpec& spec : functions_[function].values) {
    g.values.push_back(ValueStats{.is_signed = spec.is_signed, .top = TopValues(options_.top_capacity)});
  }
  return g;
}

std::optional<uint64_t> Aggregator::by_value_of(uint32_t function, uint32_t probe,
                                                std::span<const uint64_t> values) const {
  const FunctionInfo& f = functions_[function];
  const uint32_t first = first_slot_of_probe_[probe];
  const bool closing = f.usdt && first == f.return_values_at && f.return_values_at > 0;
  const int32_t slot = closing && by_return_slot_[function] >= 0 ? by_return_slot_[function] : by_slot_[function];
  if (slot < 0) return std::nullopt;
  const uint32_t count = probe == f.entry_probe ? f.return_values_at : f.values.size() - f.return_values_at;
  const auto local = static_cast<uint32_t>(slot) - first;  // unsigned: also catches slot < first
  if (local >= count || local >= values.size()) return std::nullopt;
  return normalize_value(values[local], f.values[slot]);
}

void Aggregator::add_values(GroupStats& g, uint32_t function, uint32_t probe, std::span<const uint64_t> values,
                            uint32_t missing) const {
  const FunctionInfo& f = functions_[function];
  const uint32_t first = first_slot_of_probe_[probe];
  const uint32_t count = probe == f.entry_probe ? f.return_values_at : f.values.size() - f.return_values_at;
  const std::size_t n = std::min<std::size_t>(count, values.size());
  for (std::size_t i = 0; i < n; ++i) {
    const ValueSpec& spec = f.values[first + i];
    // Not read, or nothing to read: a 0 that was never captured is no value.
    if ((i < 32 && (missing >> i & 1)) || spec.source == ValueSource::Unavailable) continue;
    const int32_t slot = g.function == function ? static_cast<int32_t>(first + i) : slot_in_row_[function][first + i];
    if (slot >= 0) g.values[static_cast<std::size_t>(slot)].add(normalize_value(values[i], spec));
  }
}

uint32_t Aggregator::thread_id(uint32_t pid, uint32_t tid, std::string_view comm) {
  const FlatIndex::Key key{.a = tid, .b = 0};
  const auto ins = thread_generation_index_.insert(key, static_cast<uint32_t>(thread_generations_.size()));
  if (ins.inserted) thread_generations_.push_back({.pid = pid, .generation = 0, .comm = std::string(comm)});
  ThreadGeneration& t = thread_generations_[ins.position];
  if (t.pid != pid || (!comm.empty() && !t.comm.empty() && t.comm != comm)) {
    t.generation = (t.generation + 1) % kGenerations;
    t.pid = pid;
    t.comm = std::string(comm);
  } else if (t.comm.empty()) {
    t.comm = std::string(comm);  // named after its first call: the same thread still
  }
  return tid | t.generation << kGenerationShift;
}

GoroutineKey Aggregator::goroutine_of(uint32_t function, uint64_t g,
                                                 std::span<const uint64_t> entry_values,
                                                 uint32_t entry_missing) const {
  if (g == 0) return {};
  const int32_t slot = function < goid_slot_.size() ? goid_slot_[function] : -1;
  if (slot >= 0 && static_cast<std::size_t>(slot) < entry_values.size() && slot < 32 && !(entry_missing >> slot & 1))
    return {.value = entry_values[static_cast<std::size_t>(slot)], .is_id = true};
  return {.value = g, .is_id = false};
}

uint32_t Aggregator::goroutine_id(uint32_t pid, GoroutineKey g) {
  // Numbers start at 2^22, above every pid a call not in Go code is grouped by.
  const auto ins = goroutine_index_.insert({.a = pid | (g.is_id ? uint64_t{1} << 63 : 0), .b = g.value}, goroutines_);
  if (ins.inserted) ++goroutines_;
  return (uint32_t{1} << kGenerationShift) + ins.position;
}

uint32_t Aggregator::caller_id(std::span<const StackFrame> stack) {
  if (stack.empty()) return 0;
  const auto ins = caller_index_.insert({.a = stack[0].object, .b = stack[0].offset}, callers_);
  if (ins.inserted) ++callers_;
  return ins.position + 1;
}

GroupStats& Aggregator::group(uint32_t function, uint32_t pid, uint32_t tid, std::optional<uint64_t> by_value,
                              std::string_view comm, GoroutineKey goroutine, std::span<const StackFrame> stack) {
  if (!keyed_) return groups_[group_of_function_[function]];
  function = row_of(function);
  const uint32_t id = options_.by == GroupBy::Caller                    ? caller_id(stack)
                      : options_.by == GroupBy::Thread                  ? thread_id(pid, tid, comm)
                      : options_.by == GroupBy::Process                 ? pid
                      : options_.by == GroupBy::Goroutine && goroutine.value ? goroutine_id(pid, goroutine)
                      : options_.by == GroupBy::Goroutine               ? pid
                                                                        : 0;
  FlatIndex::Key key{.a = (uint64_t{function} << 32) | id | (by_value ? 0 : kNoValueBit), .b = by_value.value_or(0)};
  if (last_group_ != UINT32_MAX && key == last_key_) return groups_[last_group_];
  auto found = group_index_.find(key);
  if (!found && by_value && value_groups_ >= options_.max_value_groups) {
    key = {.a = (uint64_t{function} << 32) | id | kOtherBit, .b = 0};
    found = group_index_.find(key);
  }
  if (!found) {
    found = static_cast<uint32_t>(groups_.size());
    group_index_.insert(key, *found);
    GroupStats g = make_group(function);
    g.pid = options_.by == GroupBy::Function || options_.by == GroupBy::Caller ? 0 : pid;
    g.tid = options_.by == GroupBy::Thread ? tid : 0;
    g.goroutine = options_.by == GroupBy::Goroutine ? goroutine.value : 0;
    g.goroutine_is_id = options_.by == GroupBy::Goroutine && goroutine.is_id;
    g.has_caller = options_.by == GroupBy::Caller && !stack.empty();
    if (g.has_caller) g.caller_site = stack[0];
    if (options_.by != GroupBy::Function && options_.by != GroupBy::Caller) g.comm = comm;  // by process: the name of its first thread seen
    g.other_values = (key.a & kOtherBit) != 0;
    g.has_by_value = by_value && !g.other_values;
    g.by_value = g.has_by_value ? *by_value : 0;
    value_groups_ += g.has_by_value;
    groups_.push_back(std::move(g));
  }
  last_key_ = key;
  last_group_ = *found;
  return groups_[*found];
}

// The loop has filtered; `selected` only guards the group table (one group per selected function).
void Aggregator::on_call(const Call& c, std::string_view comm) {
  if (!selected(c.function)) return;
  const FunctionInfo& f = functions_[c.function];
  std::optional<uint64_t> by;
  if (by_slot_[c.function] >= 0) {
    by = static_cast<uint32_t>(by_slot_[c.function]) < f.return_values_at
             ? by_value_of(c.function, f.entry_probe, c.entry_values)
             : by_value_of(c.function, f.return_probe, c.return_values);
  }
  GroupStats& g = group(c.function, c.pid, c.tid, by, comm,
                        goroutine_of(c.function, c.goroutine, c.entry_values, c.entry_missing), c.stack);
  ++g.calls;
  const uint64_t d = options_.duration_of(c);
  g.below_compensation += options_.compensate && d == 0 &&
                          c.duration <= options_.compensation_for(c.function) + c.nested_probe_ns;
  g.latency.record(d);
  if (g.linear) g.linear->record(d);
  if (c.has_offcpu) g.cpu.add(d, c.offcpu);
  g.nested_probe_ns += c.nested_probe_ns;
  add_values(g, c.function, f.entry_probe, c.entry_values, c.entry_missing);
  add_values(g, c.function, f.return_probe, c.return_values, c.return_missing);
}

void Aggregator::on_unmatched(const Unmatched& u, std::string_view comm) {
  if (!selected(u.function)) return;
  const bool at_entry = u.function < functions_.size() && u.probe == functions_[u.function].entry_probe;
  GroupStats& g = group(u.function, u.pid, u.tid, by_value_of(u.function, u.probe, u.values), comm,
                        goroutine_of(u.function, u.goroutine, at_entry ? u.values : std::span<const uint64_t>{},
                                     u.missing));
  // A USDT pair's done probe says an operation ended: a call, whether or not its start
  // was seen; only its latency is unknown.
  if (u.reason == UnmatchedReason::ReturnWithoutEntry && u.function < functions_.size() &&
      functions_[u.function].usdt) {
    ++g.calls;
    ++g.untimed;
    add_values(g, u.function, u.probe, u.values, u.missing);
    return;
  }
  ++g.unmatched[static_cast<std::size_t>(u.reason)];
  add_values(g, u.function, u.probe, u.values, u.missing);
}

void Aggregator::on_hit(const Hit& h, std::string_view comm) {
  if (!selected(h.function)) return;
  GroupStats& g = group(h.function, h.pid, h.tid, by_value_of(h.function, h.probe, h.values), comm);
  ++g.calls;
  add_values(g, h.function, h.probe, h.values, h.missing);
}

std::vector<GroupStats> Aggregator::function_totals() const {
  if (!keyed_) return groups_;
  std::vector<GroupStats> out;
  std::vector<uint32_t> position(functions_.size(), UINT32_MAX);
  for (uint32_t fn = 0; fn < functions_.size(); ++fn) {
    if (!selected_[fn] || row_of(fn) != fn) continue;
    position[fn] = static_cast<uint32_t>(out.size());
    out.push_back(make_group(fn));
  }
  for (const GroupStats& g : groups_) out[position[g.function]].merge(g);
  return out;
}

}  // namespace uprof
