// Where the globals a spec reads (`@counter`, `@table+16`: spec/value_request.h) are in
// the probed file: a symbol's link-time address and size, from the file's symbol
// table, or its debug file's when the file is stripped. `@0xADDR` is taken as given.
#pragma once

#include <string>
#include <vector>

#include "uprof/resolve/elf/elf_file.h"
#include "uprof/spec/value_request.h"
#include "uprof/util/result.h"

namespace uprof {

// Fills in each GlobalRef of `values`. `symbols` are the probed file's (and its debug
// file's); `file` names it in errors:
//   "spec: value '@countr': no global 'countr' in /bin/x (data objects: counter, table, ...)"
// A function, a thread-local variable or an undefined (imported) symbol is refused.
Status resolve_globals(std::vector<ValueRequest>& values, const std::vector<ElfSymbol>& symbols,
                       const std::string& file);

}  // namespace uprof
