#include "uprof/resolve/dwarf/call_frames.h"

#include <gelf.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "uprof/util/byte_reader.h"

#include "uprof/resolve/dwarf/dwarf_expr.h"

namespace uprof {

CallFrames::CallFrames(Elf* elf, Arch arch) {
  if (elf) {
    cfi_ = dwarf_getcfi_elf(elf);
    read_fde_starts(elf);
  }
  const ArchInfo& a = arch_info(arch);
  if (const RegInfo* sp = find_reg_by_perf_index(a, a.sp_reg)) sp_dwarf_ = sp->dwarf_number;
}

CallFrames::~CallFrames() {
  if (cfi_) dwarf_cfi_end(cfi_);
}

std::optional<int64_t> CallFrames::cfa_above_sp(uint64_t pc) const {
  Dwarf_Frame* frame = nullptr;
  if (!cfi_ || dwarf_cfi_addrframe(cfi_, pc, &frame) != 0) return std::nullopt;
  Dwarf_Op* ops = nullptr;
  size_t n = 0;
  std::optional<CfaRule> rule;
  if (dwarf_frame_cfa(frame, &ops, &n) == 0) rule = cfa_rule_from_ops({ops, n});
  std::free(frame);
  if (!rule || rule->dwarf_reg != sp_dwarf_) return std::nullopt;
  return rule->offset;
}

std::optional<std::pair<uint64_t, uint64_t>> CallFrames::fde_range(uint64_t pc) const {
  // The FDE starts sorted: the one at or below pc begins the range, the next ends it.
  auto next = std::upper_bound(fde_starts_.begin(), fde_starts_.end(), pc);
  if (next == fde_starts_.begin() || next == fde_starts_.end()) return std::nullopt;
  return std::make_pair(*(next - 1), *next);
}

// .eh_frame_hdr: u8 version 1, u8 eh_frame_ptr encoding, u8 fde_count encoding, u8 table
// encoding, the eh_frame pointer, the count, then (initial location, FDE address) pairs
// sorted by location. Read for the table encoding every linker writes, datarel sdata4
// (0x3b), with a udata4 (0x03) count; another encoding leaves the table empty.
void CallFrames::read_fde_starts(Elf* elf) {
  Elf_Scn* scn = nullptr;
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS) continue;
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (!name || std::string_view(name) != ".eh_frame_hdr") continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || !data->d_buf) return;
    ByteReader r(data->d_buf, data->d_size);
    auto version = r.read<uint8_t>(), ptr_enc = r.read<uint8_t>(), count_enc = r.read<uint8_t>(),
         table_enc = r.read<uint8_t>();
    if (!version || *version != 1 || !ptr_enc || !count_enc || *count_enc != 0x03 || !table_enc ||
        *table_enc != 0x3b || (*ptr_enc & 0x0f) != 0x0b)
      return;
    auto eh_frame_ptr = r.read<int32_t>();
    auto count = r.read<uint32_t>();
    if (!eh_frame_ptr || !count || *count > r.remaining() / 8) return;
    fde_starts_.reserve(*count);
    for (uint32_t i = 0; i < *count; i++) {
      auto loc = r.read<int32_t>();
      auto fde = r.read<int32_t>();
      if (!loc || !fde) break;
      fde_starts_.push_back(sh.sh_addr + static_cast<uint64_t>(static_cast<int64_t>(*loc)));
    }
    std::sort(fde_starts_.begin(), fde_starts_.end());
    return;
  }
}

}  // namespace uprof
