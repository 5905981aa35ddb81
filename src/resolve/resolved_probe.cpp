#include "uprof/resolve/resolved_probe.h"

#include <sstream>

namespace uprof {

std::string ResolvedProbe::label() const {
  std::ostringstream os;
  if (function.empty()) {
    os << "0x" << std::hex << file_offset;
  } else {
    os << function;
    if (offset_in_function) os << "+0x" << std::hex << offset_in_function;
  }
  if (is_return) os << "%return";
  return os.str();
}

}  // namespace uprof
