// The calling-convention model on synthetic signatures: the corner cases the
// fixtures do not reach (registers running out mid-struct, floats filling their
// own registers, 16-byte alignment, hidden return pointers). The fixture test
// (param_location_test.cpp) checks the model against gcc's own DWARF.
#include "uprof/resolve/dwarf/call_abi.h"

#include <gtest/gtest.h>

#include <ostream>
#include <vector>

namespace uprof {

static void PrintTo(const LocationPiece& p, std::ostream* os) {
  *os << (p.where == LocationPiece::Where::Register ? "reg" : "stack") << "{" << p.perf_reg << " @" << p.stack_offset
      << " size " << p.size << (p.deref ? " deref" : "") << "}";
}

namespace {

using K = ValueType::Kind;
using W = LocationPiece::Where;

AbiValue integer(uint32_t size = 8) {
  AbiValue v;
  v.type.kind = K::Signed;
  v.type.size = size;
  v.type.name = "long";
  v.shape.align = size;
  v.shape.int_eightbytes = size > 8 ? 3 : 1;
  return v;
}
AbiValue floating(uint32_t size = 8) {
  AbiValue v;
  v.type.kind = K::Float;
  v.type.size = size;
  v.type.name = "double";
  v.shape.align = size;
  v.shape.sse_eightbytes = 1;
  v.shape.x87 = size == 16;
  return v;
}
AbiValue record(uint32_t size, uint8_t int_eb, uint8_t sse_eb = 0, uint8_t hfa = 0) {
  AbiValue v;
  v.type.kind = K::Struct;
  v.type.size = size;
  v.type.name = "struct s";
  v.shape.int_eightbytes = int_eb;
  v.shape.sse_eightbytes = sse_eb;
  v.shape.hfa_members = hfa;
  return v;
}

LocationPiece reg(unsigned perf, uint32_t size, bool deref = false) {
  return {.where = W::Register, .perf_reg = static_cast<uint16_t>(perf), .size = size, .deref = deref};
}
LocationPiece stack(int32_t off, uint32_t size) { return {.where = W::Stack, .stack_offset = off, .size = size}; }

// x86-64 perf indices: di 5, si 4, dx 3, cx 2, r8 16, r9 17, ax 0.
constexpr unsigned DI = 5, SI = 4, DX = 3, CX = 2, R8 = 16, R9 = 17, AX = 0;

TEST(CallAbiX86, IntegersThenStackSlots) {
  std::vector<AbiValue> p(8, integer());
  p[7] = integer(4);
  auto out = abi_entry_locations(Arch::X86_64, nullptr, p);
  ASSERT_EQ(out.size(), 8u);
  const unsigned regs[] = {DI, SI, DX, CX, R8, R9};
  for (int i = 0; i < 6; i++) EXPECT_EQ(out[i].pieces, std::vector{reg(regs[i], 8)}) << i;
  EXPECT_EQ(out[6].pieces, std::vector{stack(8, 8)});
  EXPECT_EQ(out[7].pieces, std::vector{stack(16, 4)});
}

TEST(CallAbiX86, StructThatNoLongerFitsGoesToTheStackAndLeavesTheRegister) {
  // f(long x5, struct pair p, long y): p needs two registers, one is left:
  // p goes on the stack, y still takes r9 (psABI 3.2.3).
  std::vector<AbiValue> p(5, integer());
  p.push_back(record(16, 0b11));
  p.push_back(integer());
  auto out = abi_entry_locations(Arch::X86_64, nullptr, p);
  EXPECT_EQ(out[5].pieces, std::vector{stack(8, 16)});
  EXPECT_EQ(out[6].pieces, std::vector{reg(R9, 8)});
}

TEST(CallAbiX86, FloatsUseTheirOwnRegistersUntilTheyRunOut) {
  // Nine doubles and a long: eight in xmm0-7 (unavailable), the ninth at rsp+8, the long in rdi.
  std::vector<AbiValue> p(9, floating());
  p.push_back(integer());
  auto out = abi_entry_locations(Arch::X86_64, nullptr, p);
  EXPECT_EQ(out[0].reason, "in a floating-point register");
  EXPECT_EQ(out[8].pieces, std::vector{stack(8, 8)});
  EXPECT_EQ(out[9].pieces, std::vector{reg(DI, 8)});
}

TEST(CallAbiX86, MixedStructAndLongDoubleAndInt128) {
  // struct { double; long } in xmm0 + rdi; long double in memory (16-aligned); __int128 in two registers.
  std::vector<AbiValue> p{record(16, 0b10, 0b01), floating(16), integer(16), integer()};
  p[1].shape.align = 16;
  p[2].shape.align = 16;
  auto out = abi_entry_locations(Arch::X86_64, nullptr, p);
  EXPECT_EQ(out[0].reason, "partly in a floating-point register");
  EXPECT_EQ(out[1].pieces, std::vector{stack(8, 16)});
  EXPECT_EQ(out[2].pieces, (std::vector{reg(SI, 8), reg(DX, 8)}));
  EXPECT_EQ(out[3].pieces, std::vector{reg(CX, 8)});
}

TEST(CallAbiX86, ReturnInMemoryTakesRdi) {
  AbiValue big = record(40, 0);
  auto out = abi_entry_locations(Arch::X86_64, &big, std::vector{integer()});
  EXPECT_EQ(out[0].pieces, std::vector{reg(SI, 8)});
  EXPECT_EQ(abi_return_location(Arch::X86_64, &big), std::vector{reg(AX, 40, true)});
  AbiValue pair = record(16, 0b11);
  EXPECT_EQ(abi_return_location(Arch::X86_64, &pair), (std::vector{reg(AX, 8), reg(DX, 8)}));
  AbiValue d = floating();
  EXPECT_TRUE(abi_return_location(Arch::X86_64, &d).empty());
}

TEST(CallAbiBoth, ByReferenceClassAndUnknownTypes) {
  AbiValue tracked = record(8, 1);
  tracked.shape.by_reference = true;  // a C++ class with a copy constructor
  AbiValue unknown;
  unknown.type.name = "?";
  for (Arch a : {Arch::X86_64, Arch::Arm64}) {
    const ArchInfo& info = arch_info(a);
    auto out = abi_entry_locations(a, nullptr, std::vector{tracked, integer(), unknown, integer()});
    EXPECT_EQ(out[0].pieces, std::vector{reg(info.int_arg_regs[0], 8, true)});
    EXPECT_EQ(out[1].pieces, std::vector{reg(info.int_arg_regs[1], 8)});
    EXPECT_EQ(out[2].reason, "type unknown to the calling convention");
    EXPECT_FALSE(out[3].available);  // after an unknown size nothing is certain
  }
}

TEST(CallAbiArm64, IntegersThenStackSlots) {
  std::vector<AbiValue> p(10, integer());
  p[9] = integer(4);
  auto out = abi_entry_locations(Arch::Arm64, nullptr, p);
  for (unsigned i = 0; i < 8; i++) EXPECT_EQ(out[i].pieces, std::vector{reg(i, 8)}) << i;
  EXPECT_EQ(out[8].pieces, std::vector{stack(0, 8)});
  EXPECT_EQ(out[9].pieces, std::vector{stack(8, 4)});
}

TEST(CallAbiArm64, AlignedPairsLargeStructsAndFloatAggregates) {
  // f(int, __int128, struct big, struct {double x, y}, struct {double; long}):
  // x0; x2:x3 (even pair); [x4] by reference; v0-v1; x5:x6 (not homogeneous).
  std::vector<AbiValue> p{integer(4), integer(16), record(40, 0), record(16, 0, 0b11, 2), record(16, 0b10, 0b01)};
  p[1].shape.align = 16;
  auto out = abi_entry_locations(Arch::Arm64, nullptr, p);
  EXPECT_EQ(out[0].pieces, std::vector{reg(0, 4)});
  EXPECT_EQ(out[1].pieces, (std::vector{reg(2, 8), reg(3, 8)}));
  EXPECT_EQ(out[2].pieces, std::vector{reg(4, 40, true)});
  EXPECT_EQ(out[3].reason, "in a floating-point register");
  EXPECT_EQ(out[4].pieces, (std::vector{reg(5, 8), reg(6, 8)}));
}

TEST(CallAbiArm64, StructThatDoesNotFitGoesToTheStackAndClosesTheRegisters) {
  // Seven longs, then a 16-byte struct (one register left): the struct at sp+0,
  // and the next long at sp+16, not in x7 (AAPCS64 C.13: NGRN is set to 8).
  std::vector<AbiValue> p(7, integer());
  p.push_back(record(16, 0b11));
  p.push_back(integer());
  auto out = abi_entry_locations(Arch::Arm64, nullptr, p);
  EXPECT_EQ(out[7].pieces, std::vector{stack(0, 16)});
  EXPECT_EQ(out[8].pieces, std::vector{stack(16, 8)});
}

TEST(CallAbiArm64, ReturnValues) {
  AbiValue big = record(40, 0);
  auto out = abi_entry_locations(Arch::Arm64, &big, std::vector{integer()});
  EXPECT_EQ(out[0].pieces, std::vector{reg(0, 8)});  // x8 carries the buffer, x0 stays the first argument
  EXPECT_TRUE(abi_return_location(Arch::Arm64, &big).empty());
  AbiValue pair = record(16, 0b11);
  EXPECT_EQ(abi_return_location(Arch::Arm64, &pair), (std::vector{reg(0, 8), reg(1, 8)}));
  AbiValue i = integer(4);
  EXPECT_EQ(abi_return_location(Arch::Arm64, &i), std::vector{reg(0, 4)});
  EXPECT_TRUE(abi_return_location(Arch::Arm64, nullptr).empty());
}

}  // namespace
}  // namespace uprof
