// One ELF file opened with libelf: its architecture, loadable segments, symbols,
// build-id, debuglink and dynamic section. Only 64-bit x86-64 and aarch64 files open.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/resolve/elf/offset.h"
#include "uprof/util/result.h"
#include "uprof/util/unique_fd.h"

typedef struct Elf Elf;

namespace uprof {

struct ElfSymbol {
  std::string name;            // without any version suffix
  std::string version;         // "GLIBC_2.14", "" when unversioned
  bool version_default = true; // false for a hidden (name@VER) version
  uint64_t value = 0;
  uint64_t size = 0;
  uint8_t type = 0;            // STT_*
  uint8_t bind = 0;            // STB_*
  uint16_t shndx = 0;
  bool in_exec_section = false;  // its section has SHF_EXECINSTR
  bool from_dynsym = false;
};

struct DebugLink {
  std::string file;
  uint32_t crc = 0;
};

struct DynamicInfo {
  std::vector<std::string> needed;  // DT_NEEDED, in order
  std::string soname;
  std::string rpath;                // DT_RPATH
  std::string runpath;              // DT_RUNPATH
  std::string interp;               // PT_INTERP
};

class ElfFile {
 public:
  // Opens and validates `path`; errors name the file and what is wrong with it.
  static Result<ElfFile> open(const std::string& path);

  ElfFile(ElfFile&&) noexcept;
  ElfFile& operator=(ElfFile&&) noexcept;
  ~ElfFile();

  const std::string& path() const { return path_; }
  Arch arch() const { return arch_; }
  uint16_t elf_type() const { return elf_type_; }  // ET_EXEC or ET_DYN
  uint64_t file_size() const { return file_size_; }
  const std::vector<LoadSegment>& loads() const { return loads_; }
  const std::string& build_id() const { return build_id_; }  // lowercase hex, "" when none
  const std::optional<DebugLink>& debuglink() const { return debuglink_; }
  bool has_symtab() const { return has_symtab_; }
  bool has_debug_info() const { return has_debug_info_; }  // .debug_info with contents

  // Every symbol of .symtab and .dynsym, defined or not.
  std::vector<ElfSymbol> symbols() const;
  DynamicInfo dynamic() const;

  // Reads `n` bytes at file offset `off` (for tests and instruction checks).
  Result<std::vector<uint8_t>> read_bytes(uint64_t off, std::size_t n) const;

  Elf* elf() const { return elf_; }

 private:
  ElfFile() = default;
  std::string path_;
  UniqueFd fd_;
  Elf* elf_ = nullptr;
  Arch arch_ = Arch::X86_64;
  uint16_t elf_type_ = 0;
  uint64_t file_size_ = 0;
  std::vector<LoadSegment> loads_;
  std::string build_id_;
  std::optional<DebugLink> debuglink_;
  bool has_symtab_ = false;
  bool has_debug_info_ = false;
};

}  // namespace uprof
