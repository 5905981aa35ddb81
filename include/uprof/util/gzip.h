// gzip (RFC 1952) of a byte string in memory, with zlib (Debian's zlib1g, which libdw
// already needs): pprof profiles are gzipped profile.proto.
#pragma once

#include <string>
#include <string_view>

#include "uprof/util/result.h"

namespace uprof {

Result<std::string> gzip(std::string_view data);

}  // namespace uprof
