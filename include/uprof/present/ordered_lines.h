// Text lines written in the order of the times they show, for a producer that learns
// of a line after later ones: `uprof script` knows a call's line at its return but
// stamps it with its entry's time, so an outer call's line comes after its inner
// calls' lines, and a call still open at the end comes last.
//
//   push(t=30, "inner"), push(t=10, "outer")  release_through(25)  -> "outer"
//                                              release_through(40)  -> "inner"
//
// The producer says up to which time nothing earlier can come any more (its
// watermark); what was pushed at or before it is written, in time order, lines of
// one time in the order they were pushed.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <queue>
#include <string>
#include <vector>

namespace uprof {

class OrderedLines {
 public:
  void push(uint64_t time, std::string line);
  // Writes every held line stamped at or before `watermark`.
  void release_through(uint64_t watermark, std::ostream& out);
  void release_all(std::ostream& out);
  std::size_t size() const { return heap_.size(); }
  // The time of the earliest line held.
  std::optional<uint64_t> earliest() const;

 private:
  struct Line {
    uint64_t time = 0;
    uint64_t seq = 0;
    std::string text;
  };
  struct Later {
    bool operator()(const Line& a, const Line& b) const { return a.time != b.time ? a.time > b.time : a.seq > b.seq; }
  };
  std::priority_queue<Line, std::vector<Line>, Later> heap_;
  uint64_t seq_ = 0;
};

}  // namespace uprof
