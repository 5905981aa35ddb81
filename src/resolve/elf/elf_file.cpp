#include "uprof/resolve/elf/elf_file.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <string>

#include "uprof/util/file_type.h"

namespace uprof {
namespace {

std::string to_hex(const void* p, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; i++) {
    s += digits[b[i] >> 4];
    s += digits[b[i] & 15];
  }
  return s;
}

const char* machine_name(uint16_t m) {
  switch (m) {
    case EM_386: return "i386";
    case EM_ARM: return "arm";
    case EM_RISCV: return "riscv";
    case EM_PPC64: return "ppc64";
    case EM_S390: return "s390";
    case EM_MIPS: return "mips";
    case EM_LOONGARCH: return "loongarch";
    default: return nullptr;
  }
}

// Symbols in .symtab may carry their version in the name ("memcpy@@GLIBC_2.14").
void split_version(ElfSymbol& s) {
  auto at = s.name.find('@');
  if (at == std::string::npos || at == 0) return;
  bool dflt = s.name.compare(at, 2, "@@") == 0;
  s.version = s.name.substr(at + (dflt ? 2 : 1));
  s.version_default = dflt;
  s.name.resize(at);
}

// What of the file lies past its end (`size` bytes), if anything: the program headers,
// the section headers, or a PT_LOAD segment's bytes. Separate debug files pass: their
// segments keep no bytes (p_filesz 0) and their section headers are whole.
std::optional<std::string> truncation(const GElf_Ehdr& eh, Elf* elf, uint64_t size) {
  auto past = [size](uint64_t off, uint64_t len) { return off > size || len > size - off; };
  auto range = [](uint64_t off, uint64_t len) { return "bytes " + std::to_string(off) + "-" + std::to_string(off + len); };
  const uint64_t ph_len = uint64_t{eh.e_phnum} * eh.e_phentsize;
  if (eh.e_phoff && past(eh.e_phoff, ph_len)) return "its program headers lie at " + range(eh.e_phoff, ph_len);
  if (eh.e_shoff) {
    // e_shnum is 0 when the count is in the first section header (more than 65,279).
    const uint64_t first = eh.e_shentsize;
    if (past(eh.e_shoff, first)) return "its section headers start at byte " + std::to_string(eh.e_shoff);
    std::size_t n = 0;
    if (elf_getshdrnum(elf, &n) == 0 && past(eh.e_shoff, uint64_t{n} * eh.e_shentsize))
      return "its section headers lie at " + range(eh.e_shoff, uint64_t{n} * eh.e_shentsize);
  }
  for (std::size_t i = 0; i < eh.e_phnum; i++) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD && ph.p_filesz && past(ph.p_offset, ph.p_filesz))
      return "a PT_LOAD segment's bytes lie at " + range(ph.p_offset, ph.p_filesz);
  }
  return std::nullopt;
}

}  // namespace

ElfFile::ElfFile(ElfFile&& o) noexcept { *this = std::move(o); }

ElfFile& ElfFile::operator=(ElfFile&& o) noexcept {
  if (this == &o) return *this;
  if (elf_) elf_end(elf_);
  path_ = std::move(o.path_);
  fd_ = std::move(o.fd_);
  elf_ = std::exchange(o.elf_, nullptr);
  arch_ = o.arch_;
  elf_type_ = o.elf_type_;
  file_size_ = o.file_size_;
  loads_ = std::move(o.loads_);
  build_id_ = std::move(o.build_id_);
  debuglink_ = std::move(o.debuglink_);
  has_symtab_ = o.has_symtab_;
  has_debug_info_ = o.has_debug_info_;
  return *this;
}

ElfFile::~ElfFile() {
  if (elf_) elf_end(elf_);
}

Result<ElfFile> ElfFile::open(const std::string& path) {
  static const bool init = elf_version(EV_CURRENT) != EV_NONE;
  if (!init) return err("elf: libelf is too old");

  ElfFile f;
  f.path_ = path;
  // The type first, by name: a FIFO would block open(2) until a writer came, and a
  // device is no ELF file (reading /dev/zero never ends). O_NONBLOCK for what may
  // change in between; fstat decides.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return err("elf: ", path, ": ", std::strerror(errno));
  auto not_regular = [&](mode_t mode) -> Error {
    if (S_ISDIR(mode)) return err("elf: ", path, ": is a directory");
    return err("elf: ", path, " is ", file_type_name(mode), ", not an ELF file");
  };
  if (!S_ISREG(st.st_mode)) return not_regular(st.st_mode);
  f.fd_.reset(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!f.fd_.valid()) return err("elf: ", path, ": ", std::strerror(errno));
  if (fstat(f.fd_.get(), &st) != 0) return err("elf: ", path, ": ", std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return not_regular(st.st_mode);
  f.file_size_ = static_cast<uint64_t>(st.st_size);

  // The ELF magic with less than a whole header after it: libelf calls that no ELF file.
  unsigned char ident[EI_NIDENT] = {};
  const ssize_t got = ::pread(f.fd_.get(), ident, sizeof ident, 0);
  if (got >= SELFMAG && std::memcmp(ident, ELFMAG, SELFMAG) == 0 && f.file_size_ < sizeof(Elf64_Ehdr) &&
      (got <= EI_CLASS || ident[EI_CLASS] != ELFCLASS32))
    return err("elf: ", path, ": truncated at byte ", f.file_size_, ": an ELF header is ", sizeof(Elf64_Ehdr), " bytes");

  f.elf_ = elf_begin(f.fd_.get(), ELF_C_READ_MMAP, nullptr);
  if (!f.elf_ || elf_kind(f.elf_) != ELF_K_ELF) return err("elf: ", path, ": not an ELF file");
  if (gelf_getclass(f.elf_) != ELFCLASS64)
    return err("elf: ", path, ": 32-bit ELF files are not supported (uprof probes 64-bit x86_64 and arm64)");
  GElf_Ehdr eh;
  if (!gelf_getehdr(f.elf_, &eh)) return err("elf: ", path, ": unreadable ELF header: ", elf_errmsg(-1));
  // A file cut short (a copy that stopped, a full disk) loses its section headers
  // first: libelf would then show no sections, and the file would pass for stripped.
  if (auto cut = truncation(eh, f.elf_, f.file_size_)) return err("elf: ", path, ": truncated at byte ", f.file_size_, ": ", *cut);
  auto arch = arch_from_e_machine(eh.e_machine);
  if (!arch) {
    auto* n = machine_name(eh.e_machine);
    return err("elf: ", path, ": architecture ", n ? n : "e_machine " + std::to_string(eh.e_machine),
               " is not supported (uprof knows x86_64 and arm64)");
  }
  f.arch_ = *arch;
  if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
    return err("elf: ", path, ": not an executable or shared library (ELF type ", eh.e_type, ")");
  f.elf_type_ = eh.e_type;

  size_t nph = 0;
  if (elf_getphdrnum(f.elf_, &nph) != 0) return err("elf: ", path, ": bad program headers: ", elf_errmsg(-1));
  for (size_t i = 0; i < nph; i++) {
    GElf_Phdr ph;
    if (!gelf_getphdr(f.elf_, static_cast<int>(i), &ph)) continue;
    if (ph.p_type == PT_LOAD)
      f.loads_.push_back({.vaddr = ph.p_vaddr, .memsz = ph.p_memsz, .offset = ph.p_offset,
                          .filesz = ph.p_filesz, .executable = (ph.p_flags & PF_X) != 0});
  }

  const void* id = nullptr;
  ssize_t idlen = dwelf_elf_gnu_build_id(f.elf_, &id);
  if (idlen > 0) f.build_id_ = to_hex(id, static_cast<size_t>(idlen));
  GElf_Word crc = 0;
  if (const char* link = dwelf_elf_gnu_debuglink(f.elf_, &crc)) f.debuglink_ = DebugLink{link, crc};

  size_t shstrndx = 0;
  elf_getshdrstrndx(f.elf_, &shstrndx);
  for (Elf_Scn* scn = elf_nextscn(f.elf_, nullptr); scn; scn = elf_nextscn(f.elf_, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type == SHT_SYMTAB) f.has_symtab_ = true;
    const char* name = elf_strptr(f.elf_, shstrndx, sh.sh_name);
    if (name && sh.sh_type != SHT_NOBITS &&
        (std::strcmp(name, ".debug_info") == 0 || std::strcmp(name, ".zdebug_info") == 0))
      f.has_debug_info_ = true;
  }
  return f;
}

std::vector<ElfSymbol> ElfFile::symbols() const {
  std::vector<ElfSymbol> out;
  std::vector<bool> exec_section{false};
  Elf_Scn* versym_scn = nullptr;
  Elf_Scn* verdef_scn = nullptr;
  for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn; scn = elf_nextscn(elf_, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) { exec_section.push_back(false); continue; }
    exec_section.push_back((sh.sh_flags & SHF_EXECINSTR) != 0);
    if (sh.sh_type == SHT_GNU_versym) versym_scn = scn;
    if (sh.sh_type == SHT_GNU_verdef) verdef_scn = scn;
  }

  // Version index -> name, from .gnu.version_d (definitions only: undefined
  // symbols are never probe targets).
  std::map<unsigned, std::string> versions;
  if (verdef_scn) {
    GElf_Shdr sh;
    gelf_getshdr(verdef_scn, &sh);
    Elf_Data* d = elf_getdata(verdef_scn, nullptr);
    int off = 0;
    for (size_t i = 0; d && i < sh.sh_info; i++) {
      GElf_Verdef vd;
      if (!gelf_getverdef(d, off, &vd)) break;
      GElf_Verdaux va;
      if (vd.vd_cnt > 0 && gelf_getverdaux(d, off + static_cast<int>(vd.vd_aux), &va))
        if (const char* n = elf_strptr(elf_, sh.sh_link, va.vda_name)) versions[vd.vd_ndx] = n;
      if (vd.vd_next == 0) break;
      off += static_cast<int>(vd.vd_next);
    }
  }
  Elf_Data* versym = versym_scn ? elf_getdata(versym_scn, nullptr) : nullptr;

  for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn; scn = elf_nextscn(elf_, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) continue;
    bool dyn = sh.sh_type == SHT_DYNSYM;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || sh.sh_entsize == 0) continue;
    size_t n = sh.sh_size / sh.sh_entsize;
    for (size_t i = 1; i < n; i++) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym)) break;
      const char* name = elf_strptr(elf_, sh.sh_link, sym.st_name);
      if (!name || !*name) continue;
      ElfSymbol s;
      s.name = name;
      s.value = sym.st_value;
      s.size = sym.st_size;
      s.type = static_cast<uint8_t>(GELF_ST_TYPE(sym.st_info));
      s.bind = static_cast<uint8_t>(GELF_ST_BIND(sym.st_info));
      s.shndx = sym.st_shndx;
      s.in_exec_section = sym.st_shndx < exec_section.size() && exec_section[sym.st_shndx];
      s.from_dynsym = dyn;
      if (dyn && versym) {
        GElf_Versym vs;
        if (gelf_getversym(versym, static_cast<int>(i), &vs)) {
          auto it = versions.find(vs & 0x7fff);
          if (it != versions.end() && (vs & 0x7fff) > 1) {
            s.version = it->second;
            s.version_default = (vs & 0x8000) == 0;
          }
        }
      } else {
        split_version(s);
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

DynamicInfo ElfFile::dynamic() const {
  DynamicInfo info;
  size_t nph = 0;
  elf_getphdrnum(elf_, &nph);
  for (size_t i = 0; i < nph; i++) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf_, static_cast<int>(i), &ph) && ph.p_type == PT_INTERP && ph.p_filesz < 4096) {
      auto b = read_bytes(ph.p_offset, ph.p_filesz);
      if (b) info.interp.assign(b->begin(), std::find(b->begin(), b->end(), 0));
    }
  }
  for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn; scn = elf_nextscn(elf_, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || sh.sh_entsize == 0) continue;
    for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
      GElf_Dyn dyn;
      if (!gelf_getdyn(data, static_cast<int>(i), &dyn) || dyn.d_tag == DT_NULL) break;
      auto str = [&] {
        const char* s = elf_strptr(elf_, sh.sh_link, dyn.d_un.d_val);
        return std::string(s ? s : "");
      };
      switch (dyn.d_tag) {
        case DT_NEEDED: info.needed.push_back(str()); break;
        case DT_SONAME: info.soname = str(); break;
        case DT_RPATH: info.rpath = str(); break;
        case DT_RUNPATH: info.runpath = str(); break;
        default: break;
      }
    }
  }
  return info;
}

Result<std::vector<uint8_t>> ElfFile::read_bytes(uint64_t off, std::size_t n) const {
  if (off > file_size_ || file_size_ - off < n)
    return err("elf: ", path_, ": offset 0x", std::hex, off, " + ", std::dec, n,
               " is beyond the end of the file (", file_size_, " bytes)");
  std::vector<uint8_t> buf(n);
  ssize_t r = pread(fd_.get(), buf.data(), n, static_cast<off_t>(off));
  if (r < 0 || static_cast<std::size_t>(r) != n) return err("elf: ", path_, ": short read at offset ", off);
  return buf;
}

}  // namespace uprof
