// What `uprof probe --list-usdt BIN` prints: BIN's USDT probes, one line each, in the
// file's note order. Pure: located notes (resolve/usdt/usdt_notes.h) in, text out.
//
//   PROVIDER  NAME   OFFSET   ADDRESS  SEMAPHORE  ARGS
//   python    line  0x3423c  0x43423c   0x68326c  8@%r14 8@%rax -4@%ebp
//
// OFFSET is where a uprobe goes, ADDRESS the probe's virtual address, SEMAPHORE the
// semaphore's file offset (the uprobe's ref_ctr_offset) or "-", ARGS the argument
// specs as the note spells them (resolve/usdt/usdt_args.h parses them).
#pragma once

#include <string>
#include <vector>

#include "uprof/resolve/usdt/usdt_notes.h"

namespace uprof {

// The table; for a file without probes, one line saying so:
//   "./prog: no USDT probes (no .note.stapsdt notes)"
std::string render_usdt_list(const std::string& path, const std::vector<UsdtProbe>& probes);

}  // namespace uprof
