#include "uprof/resolve/image.h"

#include "uprof/util/file_path.h"

#include <filesystem>

namespace uprof {

const ElfFile* Image::dwarf_file() const {
  if (elf.has_debug_info()) return &elf;
  if (debug && debug->has_debug_info()) return &*debug;
  return nullptr;
}

Result<std::unique_ptr<Image>> Image::load(const std::string& path, const DebugSearch& search) {
  UPROF_ASSIGN(ElfFile elf, ElfFile::open(path));
  auto img = std::make_unique<Image>(Image{
      .path = canonical_path(path), .elf = std::move(elf), .debug = {}, .debug_lookup = {}, .functions = {}});
  auto symbols = img->elf.symbols();
  // A stripped file keeps only .dynsym; its full symbol table and DWARF are in
  // the debug file. Look for one also when the file has symbols but no DWARF.
  if (!img->elf.has_symtab() || !img->elf.has_debug_info()) {
    img->debug_lookup = find_debug_file(img->elf, search);
    if (img->debug_lookup.path) {
      auto dbg = ElfFile::open(*img->debug_lookup.path);
      if (dbg) {
        if (!img->elf.has_symtab()) {
          auto more = dbg->symbols();
          symbols.insert(symbols.end(), more.begin(), more.end());
        }
        img->debug = std::move(dbg).value();
      }
    }
  }
  img->functions = FunctionTable::build(symbols);
  return img;
}

}  // namespace uprof
