// Small reads of text files (/proc, /sys, caches).
#pragma once

#include <fstream>
#include <string>

namespace uprof {

// The first line of `path`, without its newline; "" when it cannot be read.
inline std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

}  // namespace uprof
