#include "uprof/present/text_table.h"

#include <algorithm>

#include "uprof/util/display_width.h"

namespace uprof {

std::string TextTable::render() const {
  std::vector<std::size_t> width(columns_.size(), 0);
  for (std::size_t c = 0; c < columns_.size(); c++) width[c] = display_width(columns_[c].header);
  for (const auto& r : rows_)
    for (std::size_t c = 0; c < columns_.size() && c < r.size(); c++) width[c] = std::max(width[c], display_width(r[c]));

  std::string out;
  auto emit = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t c = 0; c < columns_.size(); c++) {
      const std::string& s = c < cells.size() ? cells[c] : std::string();
      if (c) line += "  ";
      std::size_t pad = width[c] - std::min(width[c], display_width(s));
      if (columns_[c].align == Align::Right) line += std::string(pad, ' ') + s;
      else line += s + std::string(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  std::vector<std::string> headers;
  for (const auto& col : columns_) headers.push_back(col.header);
  emit(headers);
  for (const auto& r : rows_) emit(r);
  return out;
}

}  // namespace uprof
