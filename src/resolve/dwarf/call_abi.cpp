#include "uprof/resolve/dwarf/call_abi.h"

#include <algorithm>
#include <bit>

namespace uprof {
namespace {

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

LocationPiece reg_piece(uint8_t perf_reg, uint32_t size, bool deref = false) {
  return {.where = LocationPiece::Where::Register, .perf_reg = perf_reg, .size = size, .deref = deref};
}
LocationPiece stack_piece(uint64_t offset, uint32_t size, bool deref = false) {
  return {.where = LocationPiece::Where::Stack, .stack_offset = static_cast<int32_t>(offset), .size = size,
          .deref = deref};
}

// The integer argument registers and the argument area on the stack, handed
// out in order as the conventions do.
struct ArgCursor {
  std::span<const uint8_t> regs;   // perf indices
  unsigned next_reg = 0;
  uint64_t area = 0;               // bytes of the stack argument area used so far
  uint64_t area_base = 0;          // where that area starts above sp at entry: 8 on x86-64, 0 on arm64

  bool fits(unsigned n) const { return next_reg + n <= regs.size(); }
  // A value of `size` bytes in the area: slots of 8 bytes, aligned as the type
  // (an x86-64 `__int128` or a 16-byte aligned struct starts on 16).
  uint64_t take_stack(uint64_t size, uint64_t align) {
    area = round_up(area, std::max<uint64_t>(8, align));
    uint64_t at = area_base + area;
    area += round_up(std::max<uint64_t>(size, 1), 8);
    return at;
  }
  // Consecutive registers, 8 bytes each: `struct pair` -> di (8), si (8).
  std::vector<LocationPiece> take_regs(uint32_t size) {
    std::vector<LocationPiece> out;
    for (uint32_t done = 0; done < size; done += 8) out.push_back(reg_piece(regs[next_reg++], std::min(8u, size - done)));
    return out;
  }
  // A pointer to the value: in the next register, else in a stack slot.
  ExprLocation by_reference(uint32_t size) {
    if (fits(1)) return placed({reg_piece(regs[next_reg++], size, true)});
    return placed({stack_piece(take_stack(8, 8), size, true)});
  }
};

bool is_aggregate(const AbiValue& v) { return v.type.kind == ValueType::Kind::Struct; }

// SysV x86-64 psABI 3.2.3: INTEGER eightbytes in rdi rsi rdx rcx r8 r9, SSE
// ones in xmm0-7, MEMORY (over 16 bytes, long double) copied to the stack.
std::vector<ExprLocation> x86_entry(const ArchInfo& info, const AbiValue* ret, std::span<const AbiValue> params) {
  ArgCursor gp{.regs = info.int_arg_regs, .area_base = info.stack_args_offset};
  unsigned sse = 0;
  // A struct returned in memory: the caller passes its address in rdi, the
  // first argument moves to rsi.
  if (ret && ret->type.size && (ret->shape.by_reference || ret->type.size > 16)) gp.next_reg = 1;
  std::vector<ExprLocation> out;
  for (auto& p : params) {
    const uint32_t size = p.type.size;
    if (p.shape.by_reference) {
      out.push_back(gp.by_reference(size));
      continue;
    }
    if (p.shape.x87 || size > 16) {  // MEMORY: `struct big` is copied to rsp+8
      out.push_back(placed({stack_piece(gp.take_stack(size, p.shape.align), size)}));
      continue;
    }
    unsigned eightbytes = (size + 7) / 8;
    unsigned n_sse = std::popcount(p.shape.sse_eightbytes);
    unsigned n_int = eightbytes - n_sse;
    if (!gp.fits(n_int) || sse + n_sse > 8) {  // not enough registers: all of it on the stack
      out.push_back(placed({stack_piece(gp.take_stack(size, p.shape.align), size)}));
      continue;
    }
    sse += n_sse;
    if (n_sse) {
      gp.next_reg += n_int;
      out.push_back(unplaced(n_int ? "partly in a floating-point register" : "in a floating-point register"));
      continue;
    }
    out.push_back(placed(gp.take_regs(size)));
  }
  return out;
}

// AAPCS64 6.8.2: x0-x7 (16-byte aligned values from an even register), v0-v7
// for floating point and homogeneous aggregates, composites over 16 bytes by
// reference, then the stack from sp+0 in 8-byte slots.
// The return value's type does not move an argument: x8 carries a buffer's address.
std::vector<ExprLocation> arm64_entry(const ArchInfo& info, const AbiValue*, std::span<const AbiValue> params) {
  ArgCursor gp{.regs = info.int_arg_regs, .area_base = info.stack_args_offset};
  unsigned nsrn = 0;
  std::vector<ExprLocation> out;
  for (auto& p : params) {
    const uint32_t size = p.type.size;
    bool fp_scalar = p.type.kind == ValueType::Kind::Float && !is_aggregate(p);
    unsigned fp_regs = fp_scalar ? 1 : p.shape.hfa_members;
    if (fp_regs) {
      if (nsrn + fp_regs <= 8) {
        nsrn += fp_regs;
        out.push_back(unplaced("in a floating-point register"));
      } else {
        nsrn = 8;
        out.push_back(placed({stack_piece(gp.take_stack(size, p.shape.align), size)}));
      }
      continue;
    }
    if (p.shape.by_reference || size > 16) {  // `struct big b` arrives as a pointer in the next register
      out.push_back(gp.by_reference(size));
      continue;
    }
    if (p.shape.align >= 16) gp.next_reg = std::min<unsigned>(round_up(gp.next_reg, 2), gp.regs.size());
    unsigned n = (size + 7) / 8;
    if (gp.fits(n)) {
      out.push_back(placed(gp.take_regs(size)));
    } else {
      gp.next_reg = gp.regs.size();
      out.push_back(placed({stack_piece(gp.take_stack(size, p.shape.align), size)}));
    }
  }
  return out;
}

// The two conventions classify arguments by different rules (eightbyte classes
// and MEMORY; HFAs, register pairs and copies by reference): each is its own code.
using EntryConvention = std::vector<ExprLocation> (*)(const ArchInfo&, const AbiValue*, std::span<const AbiValue>);
constexpr PerArch<EntryConvention> kEntryConventions{.x86_64 = x86_entry, .arm64 = arm64_entry};

}  // namespace

std::vector<ExprLocation> abi_entry_locations(Arch arch, const AbiValue* ret, std::span<const AbiValue> params) {
  // Without a parameter's type its size is unknown, and so is every register
  // and slot after it.
  std::size_t known = 0;
  while (known < params.size() && params[known].type.kind != ValueType::Kind::Unknown &&
         !params[known].shape.unknown_layout)
    known++;
  auto out = kEntryConventions[arch](arch_info(arch), ret, params.first(known));
  for (std::size_t i = known; i < params.size(); i++)
    out.push_back(unplaced(i == known ? "type unknown to the calling convention"
                                      : "follows a parameter of unknown type in the calling convention"));
  return out;
}

std::vector<LocationPiece> abi_return_location(Arch arch, const AbiValue* ret) {
  if (!ret || ret->type.kind == ValueType::Kind::Unknown || ret->type.size == 0 || ret->shape.unknown_layout) return {};
  const ArchInfo& info = arch_info(arch);
  const uint32_t size = ret->type.size;
  bool fp = ret->type.kind == ValueType::Kind::Float || ret->shape.hfa_members || ret->shape.sse_eightbytes ||
            ret->shape.x87;
  if (ret->shape.by_reference || size > 16) {
    // x86-64 hands the caller's buffer back in rax; AAPCS64 took it in x8 and
    // keeps no copy at the return.
    if (info.returns_result_address) return {reg_piece(info.return_reg, size, true)};
    return {};
  }
  if (fp) return {};
  // rax:rdx / x0:x1 for 9 to 16 bytes.
  std::vector<LocationPiece> out{reg_piece(info.return_reg, std::min(8u, size))};
  if (size > 8) out.push_back(reg_piece(info.return_reg_hi, size - 8));
  return out;
}

}  // namespace uprof
