#include "uprof/present/ordered_lines.h"

namespace uprof {

void OrderedLines::push(uint64_t time, std::string line) { heap_.push(Line{time, seq_++, std::move(line)}); }

void OrderedLines::release_through(uint64_t watermark, std::ostream& out) {
  while (!heap_.empty() && heap_.top().time <= watermark) {
    out << heap_.top().text;
    heap_.pop();
  }
}

void OrderedLines::release_all(std::ostream& out) { release_through(UINT64_MAX, out); }

std::optional<uint64_t> OrderedLines::earliest() const {
  if (heap_.empty()) return std::nullopt;
  return heap_.top().time;
}

}  // namespace uprof
