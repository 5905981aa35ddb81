#include "elf_functions.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

ElfFunctions::File ElfFunctions::read(const std::string& path) {
  File f;
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error_ = path + ": " + std::strerror(errno);
    return f;
  }
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  std::size_t nph = 0;
  if (!elf || elf_getphdrnum(elf, &nph) != 0) {
    error_ = path + ": not an ELF file";
    if (elf) elf_end(elf);
    close(fd);
    return f;
  }
  for (std::size_t i = 0; i < nph; i++) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD)
      f.loads.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz});
  }
  // .symtab when the file has one (the fixtures are built -g), else .dynsym (libc).
  Elf_Scn* chosen = nullptr;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !chosen)) chosen = scn;
  }
  if (chosen) {
    GElf_Shdr sh;
    gelf_getshdr(chosen, &sh);
    Elf_Data* data = elf_getdata(chosen, nullptr);
    const std::size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
    for (std::size_t i = 0; data && i < n; i++) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
      if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
      const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
      f.functions.push_back({sym.st_value, sym.st_size, name ? name : "?"});
    }
  }
  std::sort(f.functions.begin(), f.functions.end(),
            [](const Function& a, const Function& b) { return a.start < b.start; });
  f.ok = true;
  elf_end(elf);
  close(fd);
  return f;
}

std::string ElfFunctions::at_return_address(const std::string& path, uint64_t offset) {
  auto it = files_.find(path);
  if (it == files_.end()) it = files_.emplace(path, read(path)).first;
  const File& f = it->second;
  if (!f.ok) return "";
  // The call is the instruction before the return address: its file offset is offset - 1
  // (any byte of it will do), its address that plus the segment's vaddr - offset.
  const uint64_t at = offset - 1;
  for (const Load& l : f.loads) {
    if (at < l.offset || at >= l.offset + l.filesz) continue;
    const uint64_t vaddr = at - l.offset + l.vaddr;
    for (const Function& fn : f.functions)
      if (vaddr >= fn.start && vaddr < fn.start + std::max<uint64_t>(fn.size, 1)) return fn.name;
    return "?";
  }
  return "?";
}
