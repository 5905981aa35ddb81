#include "uprof/resolve/dwarf/source_lines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <set>

namespace uprof {
namespace {

std::string_view base_name(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string list(const std::vector<std::string>& items, std::size_t max) {
  std::string s;
  for (std::size_t i = 0; i < items.size() && i < max; i++) s += (i ? ", " : "") + items[i];
  if (items.size() > max) s += ", ...";
  return s;
}

}  // namespace

bool source_path_matches(std::string_view full, std::string_view name) {
  while (name.substr(0, 2) == "./") name.remove_prefix(2);
  if (name.empty() || full.size() < name.size()) return false;
  if (full == name) return true;
  return full.substr(full.size() - name.size()) == name && full[full.size() - name.size() - 1] == '/';
}

Result<LineSites> pick_line_sites(const std::vector<LineRow>& rows, std::string_view name, uint32_t line,
                                  const std::vector<std::pair<uint64_t, uint64_t>>& only) {
  std::set<std::string> matched;
  for (const LineRow& r : rows)
    if (!r.end_sequence && source_path_matches(r.file, name)) matched.insert(r.file);
  if (matched.empty()) {
    std::set<std::string> names;
    for (const LineRow& r : rows)
      if (!r.end_sequence) names.insert(std::string(base_name(r.file)));
    if (names.empty()) return err("no line table (was it built with -g?)");
    return err("no source file '", name, "' in the line table (its files: ",
               list(std::vector<std::string>(names.begin(), names.end()), 8), ")");
  }
  if (matched.size() > 1)
    return err("'", name, "' is ambiguous: ", list(std::vector<std::string>(matched.begin(), matched.end()), 6),
               " (name one by more of its path)");
  LineSites out{.file = *matched.begin(), .addresses = {}};
  auto inside = [&](uint64_t a) {
    return only.empty() || std::any_of(only.begin(), only.end(), [&](auto& r) { return a >= r.first && a < r.second; });
  };
  std::set<uint32_t> lines_with_code;
  const LineRow* prev = nullptr;  // the previous row of the same sequence
  for (const LineRow& r : rows) {
    if (r.end_sequence) {
      prev = nullptr;
      continue;
    }
    const bool same_line_as_prev = prev && prev->line == r.line && prev->file == r.file;
    prev = &r;
    if (r.file != out.file || !r.is_stmt || !inside(r.addr)) continue;
    lines_with_code.insert(r.line);
    if (r.line == line && !same_line_as_prev) out.addresses.push_back(r.addr);
  }
  std::sort(out.addresses.begin(), out.addresses.end());
  out.addresses.erase(std::unique(out.addresses.begin(), out.addresses.end()), out.addresses.end());
  if (out.addresses.empty()) {
    std::vector<std::string> near;
    auto above = lines_with_code.lower_bound(line);
    if (above != lines_with_code.begin()) near.push_back(std::to_string(*std::prev(above)));
    if (above != lines_with_code.end()) near.push_back(std::to_string(*above));
    if (near.empty()) return err("no code at that line (none of ", base_name(out.file), " has code here)");
    return err("no code at that line; nearest lines with code: ", list(near, 2));
  }
  return out;
}

Result<std::vector<LineRow>> read_line_rows(Dwarf* dbg, const std::string& path) {
  std::vector<LineRow> rows;
  if (!dbg) return rows;
  Dwarf_Off off = 0, next = 0;
  size_t header = 0;
  while (true) {
    int r = dwarf_nextcu(dbg, off, &next, &header, nullptr, nullptr, nullptr);
    if (r > 0) break;
    if (r < 0) return err("dwarf: ", path, ": corrupt unit at offset ", off, ": ", dwarf_errmsg(-1));
    // The unit's DIE follows its header.
    Dwarf_Die cu;
    if (!dwarf_offdie(dbg, off + header, &cu)) {
      off = next;
      continue;
    }
    off = next;
    Dwarf_Lines* lines = nullptr;
    size_t n = 0;
    if (dwarf_getsrclines(&cu, &lines, &n) != 0) continue;  // a unit without a line table
    for (size_t i = 0; i < n; i++) {
      Dwarf_Line* l = dwarf_onesrcline(lines, i);
      Dwarf_Addr addr = 0;
      int lineno = 0;
      bool stmt = true, end = false;
      if (!l || dwarf_lineaddr(l, &addr) != 0 || dwarf_lineno(l, &lineno) != 0) continue;
      dwarf_linebeginstatement(l, &stmt);
      dwarf_lineendsequence(l, &end);
      const char* src = dwarf_linesrc(l, nullptr, nullptr);
      rows.push_back({.addr = addr, .file = src ? src : "", .line = static_cast<uint32_t>(std::max(lineno, 0)),
                      .is_stmt = stmt, .end_sequence = end});
    }
  }
  return rows;
}

Result<DeclLine> decl_line(Dwarf* dbg, uint64_t die_offset) {
  Dwarf_Die die;
  if (!dbg || !dwarf_offdie(dbg, die_offset, &die)) return err("dwarf: DIE ", die_offset, " unreadable");
  int line = 0;
  const char* file = dwarf_decl_file(&die);
  if (!file || dwarf_decl_line(&die, &line) != 0) return err("dwarf: the function has no declaration line");
  return DeclLine{.file = file, .line = static_cast<uint32_t>(line)};
}

}  // namespace uprof
