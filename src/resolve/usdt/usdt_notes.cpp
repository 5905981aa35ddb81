#include "uprof/resolve/usdt/usdt_notes.h"

#include <gelf.h>
#include <libelf.h>

#include <cstring>
#include <string_view>

#include "uprof/util/byte_reader.h"
#include "uprof/util/hex.h"

namespace uprof {
namespace {

constexpr uint32_t kNtStapsdt = 3;  // sys/sdt.h _SDT_NOTE_TYPE
constexpr std::string_view kOwner{"stapsdt\0", 8};

std::size_t pad4(std::size_t n) { return (4 - n % 4) % 4; }

}  // namespace

Result<std::vector<UsdtNote>> parse_stapsdt_notes(std::span<const std::byte> section, uint64_t section_offset,
                                                  const std::string& path) {
  std::vector<UsdtNote> out;
  ByteReader r(section);
  while (!r.at_end()) {
    uint64_t at = section_offset + r.offset();
    auto bad = [&](auto&&... what) {
      return err("usdt: ", path, ": note at file offset ", hex(at), ": ", what...);
    };
    // Elf64_Nhdr: namesz, descsz, type (three u32, as Elf32_Nhdr).
    auto namesz = r.read<uint32_t>();
    auto descsz = r.read<uint32_t>();
    auto type = r.read<uint32_t>();
    if (!namesz || !descsz || !type) return bad("truncated note header (", r.remaining(), " bytes left)");
    // The name and the desc are each padded to 4 bytes; the last note's padding may
    // be cut by the section's end.
    auto name = r.bytes(*namesz);
    if (!name) return bad("name of ", *namesz, " bytes runs past the section's end");
    r.skip(std::min(pad4(*namesz), r.remaining()));
    auto desc = r.bytes(*descsz);
    if (!desc) return bad("desc of ", *descsz, " bytes runs past the section's end");
    r.skip(std::min(pad4(*descsz), r.remaining()));

    std::string_view owner(reinterpret_cast<const char*>(name->data()), name->size());
    if (owner != kOwner || *type != kNtStapsdt) continue;  // another tool's note

    // The desc: pc, base, semaphore (u64 each in a 64-bit file), then provider,
    // name and arguments, each NUL-terminated:
    //   3c 42 43 00 ..  a0 c5 8c 00 ..  6c 42 a8 00 ..  "python\0line\08@%r14 8@%rax -4@%ebp\0"
    ByteReader d(*desc);
    UsdtNote n;
    n.note_offset = at;
    auto pc = d.read<uint64_t>();
    auto base = d.read<uint64_t>();
    auto sem = d.read<uint64_t>();
    if (!pc || !base || !sem) return bad("desc of ", *descsz, " bytes is too short for 3 addresses");
    n.pc = *pc;
    n.base = *base;
    n.semaphore = *sem;
    std::size_t pos = d.offset();
    for (std::string* field : {&n.provider, &n.name, &n.args}) {
      auto s = d.cstring_at(pos);
      if (!s) {
        const char* which = field == &n.provider ? "provider" : field == &n.name ? "name" : "arguments";
        return bad("the ", which, " string at desc byte ", pos, " has no NUL before the desc's end");
      }
      *field = std::string(*s);
      pos += s->size() + 1;
    }
    if (n.provider.empty() || n.name.empty()) return bad("empty provider or probe name");
    out.push_back(std::move(n));
  }
  return out;
}

Result<std::vector<UsdtProbe>> locate_usdt_probes(const std::vector<UsdtNote>& notes,
                                                  std::optional<uint64_t> stapsdt_base,
                                                  std::span<const LoadSegment> loads, const std::string& path) {
  std::vector<UsdtProbe> out;
  for (const auto& n : notes) {
    auto bad = [&](auto&&... what) {
      return err("usdt: ", path, ": note at file offset ", hex(n.note_offset), " (", n.provider, ":", n.name,
                 "): ", what...);
    };
    // Prelinked: .stapsdt.base moved from n.base to *stapsdt_base, and so did
    // everything else (python3.11: both 0x8cc5a0, no move). Unsigned wrap-around
    // makes a move down come out right too.
    uint64_t delta = stapsdt_base ? *stapsdt_base - n.base : 0;
    UsdtProbe p;
    p.note = n;
    p.vaddr = n.pc + delta;
    auto off = vaddr_to_offset(loads, p.vaddr);
    if (!off) return bad("probe address ", hex(p.vaddr), " is in no loadable segment of the file");
    p.file_offset = *off;
    if (n.semaphore != 0) {
      // The semaphore is a u16 in .probes, which is in a writable PT_LOAD with file
      // contents (python3.11: 0xa8426c -> file offset 0x68326c).
      p.semaphore_vaddr = n.semaphore + delta;
      auto soff = vaddr_to_offset(loads, p.semaphore_vaddr);
      if (!soff) return bad("semaphore address ", hex(p.semaphore_vaddr), " is in no loadable segment of the file");
      p.semaphore_offset = *soff;
    }
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<UsdtProbe>> read_usdt_probes(const ElfFile& elf) {
  Elf* e = elf.elf();
  GElf_Ehdr eh;
  if (!gelf_getehdr(e, &eh)) return err("usdt: ", elf.path(), ": unreadable ELF header: ", elf_errmsg(-1));
  // Both architectures uprof knows are little-endian in practice; a big-endian
  // aarch64 file would need every u32/u64 of the notes swapped.
  if (eh.e_ident[EI_DATA] != ELFDATA2LSB) return err("usdt: ", elf.path(), ": big-endian ELF files are not supported");
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(e, &shstrndx) != 0) return std::vector<UsdtProbe>{};  // no sections, no notes

  std::vector<UsdtNote> notes;
  std::optional<uint64_t> base;
  for (Elf_Scn* scn = elf_nextscn(e, nullptr); scn; scn = elf_nextscn(e, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    const char* name = elf_strptr(e, shstrndx, sh.sh_name);
    if (!name) continue;
    if (std::strcmp(name, ".stapsdt.base") == 0 && (sh.sh_flags & SHF_ALLOC)) base = sh.sh_addr;
    if (std::strcmp(name, ".note.stapsdt") != 0 || sh.sh_type != SHT_NOTE) continue;
    // Read straight from the file (bounds-checked against its size), not through
    // libelf's translation, so the decoder sees exactly the bytes readelf does.
    UPROF_ASSIGN(auto bytes, elf.read_bytes(sh.sh_offset, sh.sh_size));
    auto span = std::as_bytes(std::span<const uint8_t>(bytes));
    UPROF_ASSIGN(auto some, parse_stapsdt_notes(span, sh.sh_offset, elf.path()));
    notes.insert(notes.end(), some.begin(), some.end());
  }
  return locate_usdt_probes(notes, base, elf.loads(), elf.path());
}

}  // namespace uprof
