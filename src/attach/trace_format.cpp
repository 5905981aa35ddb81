#include "uprof/attach/trace_format.h"

#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>

namespace uprof {
namespace {

// "offset:20;" -> 20, from the part of a field line after "offset:".
std::optional<uint64_t> number_after(std::string_view line, std::string_view key) {
  auto at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  auto rest = line.substr(at + key.size());
  rest = rest.substr(0, rest.find(';'));
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
  if (ec != std::errc() || end != rest.data() + rest.size() || rest.empty()) return std::nullopt;
  return v;
}

}  // namespace

Result<std::vector<TraceField>> parse_trace_format(std::string_view text, std::string_view where) {
  std::vector<TraceField> out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    line_no++;
    auto f = line.find("field:");
    if (f == std::string_view::npos) continue;
    // "field:__data_loc char[] s0;" : the declaration ends at the first ';', its name
    // is the last word (without "[16]" for an array).
    std::string_view decl = line.substr(f + 6, line.find(';', f) - f - 6);
    auto space = decl.find_last_of(" \t");
    std::string_view name = space == std::string_view::npos ? decl : decl.substr(space + 1);
    if (auto br = name.find('['); br != std::string_view::npos) name = name.substr(0, br);
    auto off = number_after(line, "offset:"), size = number_after(line, "size:");
    if (name.empty() || !off || !size || *off > UINT32_MAX || *size > UINT32_MAX)
      return err("attach: ", where, ": line ", line_no, ": cannot read the field '", line, "'");
    out.push_back({.name = std::string(name), .offset = static_cast<uint32_t>(*off),
                   .size = static_cast<uint32_t>(*size), .data_loc = decl.find("__data_loc") != std::string_view::npos});
  }
  if (out.empty()) return err("attach: ", where, ": no fields");
  return out;
}

Result<std::vector<TraceField>> read_trace_format(const std::string& path) {
  std::ifstream in(path);
  if (!in) return err("attach: ", path, ": cannot read the event's format");
  std::ostringstream os;
  os << in.rdbuf();
  return parse_trace_format(os.str(), path);
}

}  // namespace uprof
