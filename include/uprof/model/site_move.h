// A probe site that placement (resolve/insn/probe_placement.h) moved past the function's
// first instructions: where it is now, and what it moved past, for the line before a
// recording ("mix3 endbr64 (single-stepped) -> +0x4 emulated (push %rbp)").
#pragma once

#include <cstdint>
#include <string>

namespace uprof {

struct SiteMove {
  std::string path;
  uint64_t file_offset = 0;  // the site now
  std::string from;          // "endbr64 (single-stepped) -> +0x4"
};

}  // namespace uprof
