// Aligned text columns for terminal output: numbers right-aligned, text left.
//   FUNCTION  ADDRESS  OFFSET  SIZE
//   add       0x1139   0x1139    20
#pragma once

#include <string>
#include <vector>

namespace uprof {

enum class Align { Left, Right };

class TextTable {
 public:
  struct Column {
    std::string header;
    Align align = Align::Left;
  };
  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::size_t rows() const { return rows_.size(); }
  // Two spaces between columns; no trailing spaces; the last left-aligned column is not padded.
  std::string render() const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace uprof
