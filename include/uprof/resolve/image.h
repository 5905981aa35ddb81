// A probe-able file as uprof sees it: the ELF file itself, its function table
// (from its own symbols, plus its separate debug file's when it is stripped), and
// where that debug file was looked for.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "uprof/resolve/find/debug_file.h"
#include "uprof/resolve/elf/elf_file.h"
#include "uprof/resolve/elf/function_table.h"

namespace uprof {

struct Image {
  std::string path;                // absolute, symlinks resolved
  ElfFile elf;
  std::optional<ElfFile> debug;    // the separate debug file, when one was needed and found
  DebugFileLookup debug_lookup;    // where it was looked for
  FunctionTable functions;

  // The file whose DWARF describes this image: the debug file, or the image itself.
  const ElfFile* dwarf_file() const;
  bool stripped() const { return !elf.has_symtab(); }

  static Result<std::unique_ptr<Image>> load(const std::string& path, const DebugSearch& search);
};

}  // namespace uprof
