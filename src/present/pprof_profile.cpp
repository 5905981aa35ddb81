#include "uprof/present/pprof_profile.h"

#include <map>

#include "uprof/present/report_text.h"
#include "uprof/store/varint.h"
#include "uprof/util/gzip.h"

namespace uprof {

namespace {

// Protocol buffers' wire format, as much of it as a profile needs: varints (wire type 0)
// and length-delimited fields (wire type 2: strings, messages, packed numbers).
void varint_field(std::string& out, uint32_t field, uint64_t v) {
  put_varint(out, uint64_t{field} << 3 | 0);
  put_varint(out, v);
}
void bytes_field(std::string& out, uint32_t field, std::string_view bytes) {
  put_varint(out, uint64_t{field} << 3 | 2);
  put_varint(out, bytes.size());
  out.append(bytes);
}
void packed_field(std::string& out, uint32_t field, const std::vector<uint64_t>& values) {
  std::string packed;
  for (uint64_t v : values) put_varint(packed, v);
  bytes_field(out, field, packed);
}

// Profile's string_table: index 0 is "", as the format requires.
class Strings {
 public:
  Strings() { index(""); }
  uint64_t index(const std::string& s) {
    auto [it, fresh] = at_.try_emplace(s, table_.size());
    if (fresh) table_.push_back(s);
    return it->second;
  }
  const std::vector<std::string>& table() const { return table_; }

 private:
  std::map<std::string, uint64_t> at_;
  std::vector<std::string> table_;
};

// Profile's field numbers (profile.proto).
enum : uint32_t {
  kSampleType = 1, kSample = 2, kLocation = 4, kFunction = 5, kStringTable = 6,
  kTimeNanos = 9, kDurationNanos = 10, kDefaultSampleType = 14,
};

}  // namespace

std::string pprof_proto(const ReportModel& m) {
  Strings strings;
  std::string out;
  auto value_type = [&](const std::string& type, const std::string& unit) {
    std::string vt;
    varint_field(vt, 1, strings.index(type));
    varint_field(vt, 2, strings.index(unit));
    bytes_field(out, kSampleType, vt);
  };
  value_type("calls", "count");
  value_type("latency", "nanoseconds");
  if (m.offcpu) {
    value_type("on_cpu", "nanoseconds");
    value_type("off_cpu", "nanoseconds");
  }
  // One location (and function) per name, numbered from 1 in order of first use.
  std::map<std::string, uint64_t> location_of;
  std::vector<std::string> names;
  auto location = [&](const std::string& name) {
    auto [it, fresh] = location_of.try_emplace(name, names.size() + 1);
    if (fresh) names.push_back(name);
    return it->second;
  };
  if (m.stacks) {
    for (const NamedStack& s : m.stacks->stacks) {
      std::vector<uint64_t> ids{location(m.functions.functions[s.function].name)};
      for (auto f = s.frames.rbegin(); f != s.frames.rend(); ++f) ids.push_back(location(*f));
      std::vector<uint64_t> values{s.w.calls, s.w.latency_ns};
      if (m.offcpu) {
        values.push_back(s.w.cpu.on_cpu_ns);
        values.push_back(s.w.cpu.off_cpu_ns());
      }
      std::string sample;
      packed_field(sample, 1, ids);     // location_id
      packed_field(sample, 2, values);  // value (int64: these are never negative)
      bytes_field(out, kSample, sample);
    }
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    const uint64_t id = i + 1;
    std::string line;
    varint_field(line, 1, id);  // function_id
    std::string loc;
    varint_field(loc, 1, id);   // id
    bytes_field(loc, 4, line);  // line
    bytes_field(out, kLocation, loc);
    std::string fn;
    varint_field(fn, 1, id);                        // id
    varint_field(fn, 2, strings.index(names[i]));   // name
    varint_field(fn, 3, strings.index(names[i]));   // system_name
    bytes_field(out, kFunction, fn);
  }
  varint_field(out, kTimeNanos, m.meta.start_realtime_ns);
  varint_field(out, kDurationNanos, static_cast<uint64_t>(recording_seconds(m) * 1e9));
  varint_field(out, kDefaultSampleType, strings.index("latency"));
  // Last: every string above has its index by now.
  for (const std::string& s : strings.table()) bytes_field(out, kStringTable, s);
  return out;
}

Result<std::string> render_pprof(const ReportModel& m) { return gzip(pprof_proto(m)); }

}  // namespace uprof
