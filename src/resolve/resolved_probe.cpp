#include "uprof/resolve/resolved_probe.h"

#include "uprof/model/probe_label.h"

namespace uprof {

std::string ResolvedProbe::label() const {
  return probe_label(function, offset_in_function, file_offset) + (is_return ? "%return" : "");
}

}  // namespace uprof
