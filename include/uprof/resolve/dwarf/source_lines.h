// Source lines -> code addresses, from the DWARF line table: `-e workload.c:42` and
// perf probe's `-e loop_sum:3` (3 lines below the line loop_sum is declared on).
//
// The line table is a list of rows (address, file, line, is_stmt) per sequence of code:
//   0x1189  fixtures/lines.c  12  is_stmt     <- a probe here
//   0x118d  fixtures/lines.c  12              <- not a statement start: skipped
//   0x1191  fixtures/lines.c  13  is_stmt
//   0x11a0  fixtures/lines.c  12  is_stmt     <- line 12 again (loop condition): a probe here too
// A line gets a probe where a statement of it starts: at each is_stmt row of it whose
// previous row in the sequence is of another line. The rows of an inlined function's
// body name its own file and line, so a line of `static inline sq()` finds every copy.
// A run of rows of one line (gcc's "view" rows, or a line split by is_stmt markers)
// is one probe, so that a loop body's line counts one hit per iteration.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "uprof/util/result.h"

typedef struct Dwarf Dwarf;

namespace uprof {

struct LineRow {
  uint64_t addr = 0;
  std::string file;         // as the line table names it, usually absolute: "/src/fixtures/lines.c"
  uint32_t line = 0;
  bool is_stmt = true;
  bool end_sequence = false;  // the address past a sequence's last instruction
};

struct LineSites {
  std::string file;                // the full name of the one file that matched
  std::vector<uint64_t> addresses; // sorted, unique
};

// True when `full` is `name` or ends in '/' + `name`: "fixtures/lines.c" matches
// "/src/tests/fixtures/lines.c", "s.c" does not match "/src/lines.c".
bool source_path_matches(std::string_view full, std::string_view name);

// Pure: the statement starts of `line` in the file `name` (a name or a path suffix), from
// rows in sequence order. `only` limits them to [first, second) ranges when not empty.
// Errors, said as a person would want them:
//   "no source file 'nope.c' in the line table (its files: lines.c, funcs.c)"
//   "'util.h' is ambiguous: /src/a/util.h, /src/b/util.h (name one by more of its path)"
//   "no code at that line; nearest lines with code: 40, 44"
Result<LineSites> pick_line_sites(const std::vector<LineRow>& rows, std::string_view name, uint32_t line,
                                  const std::vector<std::pair<uint64_t, uint64_t>>& only = {});

// Every row of every unit's line table (DWARF 5 or older), in each unit's sequence order.
Result<std::vector<LineRow>> read_line_rows(Dwarf* dbg, const std::string& path_for_messages);

// Where a function is declared: its file (full, as the line table names it) and line.
struct DeclLine {
  std::string file;
  uint32_t line = 0;
};
Result<DeclLine> decl_line(Dwarf* dbg, uint64_t function_die_offset);

}  // namespace uprof
