#include "uprof/resolve/elf/pointer_relocs.h"

#include <gelf.h>
#include <libelf.h>

namespace uprof {

std::vector<PointerReloc> pointer_relocs(const ElfFile& file) {
  std::vector<PointerReloc> out;
  Elf* elf = file.elf();
  const ArchInfo::PointerRelocs& types = arch_info(file.arch()).relocs;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !(sh.sh_flags & SHF_ALLOC) || sh.sh_entsize == 0) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    Elf_Scn* symtab = elf_getscn(elf, sh.sh_link);
    GElf_Shdr symsh;
    Elf_Data* syms = symtab && gelf_getshdr(symtab, &symsh) ? elf_getdata(symtab, nullptr) : nullptr;
    if (!data) continue;
    const std::size_t n = sh.sh_size / sh.sh_entsize;
    for (std::size_t i = 0; i < n; i++) {
      GElf_Rela r;
      if (!gelf_getrela(data, static_cast<int>(i), &r)) break;
      const uint32_t type = static_cast<uint32_t>(GELF_R_TYPE(r.r_info));
      PointerReloc p{.kind = PointerReloc::Kind::GlobDat, .slot = r.r_offset, .symbol = {}, .addend = r.r_addend};
      if (type == types.irelative) p.kind = PointerReloc::Kind::Irelative;
      else if (type == types.glob_dat) p.kind = PointerReloc::Kind::GlobDat;
      else if (type == types.jump_slot) p.kind = PointerReloc::Kind::JumpSlot;
      else if (type == types.abs64) p.kind = PointerReloc::Kind::Abs64;
      else continue;
      const auto sym_index = GELF_R_SYM(r.r_info);
      GElf_Sym sym;
      if (sym_index != 0 && syms && gelf_getsym(syms, static_cast<int>(sym_index), &sym))
        if (const char* name = elf_strptr(elf, symsh.sh_link, sym.st_name)) p.symbol = name;
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace uprof
