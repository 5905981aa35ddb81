#include "uprof/drain/sample_values.h"

#include <gtest/gtest.h>

#include <cstring>

namespace uprof {
namespace {

ValueSpec reg(uint16_t r) { return {.name = "r", .source = ValueSource::Register, .reg = r, .stack_offset = 0, .size = 8, .is_signed = true}; }
ValueSpec slot(int32_t off, uint8_t size = 8) {
  return {.name = "s", .source = ValueSource::Stack, .reg = 7, .stack_offset = off, .size = size, .is_signed = true};
}

TEST(SampleValues, RegistersInMaskOrderAndStackSlots) {
  // x86-64 sample with AX, SI, DI (mask bits 0, 4, 5): regs[] holds them in bit order.
  Sample s;
  s.regs_abi = 2;
  s.regs_mask = (1u << 0) | (1u << 4) | (1u << 5);
  s.nregs = 3;
  s.regs[0] = 11;  // AX
  s.regs[1] = 10;  // SI
  s.regs[2] = 1;   // DI
  std::byte stack[24];
  uint64_t words[3] = {0xdead, 7, static_cast<uint64_t>(-5)};
  std::memcpy(stack, words, sizeof words);
  s.stack = std::span<const std::byte>(stack, 24);
  s.stack_dyn_size = 24;

  Event e;
  ValueSpec specs[] = {reg(5), reg(4), reg(0), slot(8), slot(16, 4)};
  EXPECT_EQ(extract_values(s, specs, 7, e), 0u);
  ASSERT_EQ(e.nvalues, 5);
  EXPECT_EQ(e.values[0], 1u);
  EXPECT_EQ(e.values[1], 10u);
  EXPECT_EQ(e.values[2], 11u);
  EXPECT_EQ(e.values[3], 7u);
  EXPECT_EQ(e.values[4], 0xfffffffbu);  // 4 bytes of -5
}

TEST(SampleValues, MissingValuesAreCounted) {
  Sample s;
  s.regs_abi = 2;
  s.regs_mask = 1u << 5;
  s.nregs = 1;
  s.regs[0] = 3;
  std::byte stack[16]{};
  s.stack = std::span<const std::byte>(stack, 16);
  s.stack_dyn_size = 8;  // the kernel could copy only 8 bytes
  Event e;
  ValueSpec specs[] = {reg(5), reg(4), slot(0), slot(8)};
  EXPECT_EQ(extract_values(s, specs, 7, e), 2u);
  EXPECT_EQ(e.values[0], 3u);
  EXPECT_EQ(e.values[1], 0u);
}

TEST(SampleValues, Arm64AllRegisters) {
  Sample s;
  s.regs_abi = 2;
  s.regs_mask = (uint64_t{1} << 33) - 1;
  s.nregs = 33;
  for (int i = 0; i < 33; i++) s.regs[static_cast<std::size_t>(i)] = 1000 + static_cast<uint64_t>(i);
  Event e;
  ValueSpec specs[] = {reg(0), reg(1), reg(30), reg(31)};
  EXPECT_EQ(extract_values(s, specs, 7, e), 0u);
  EXPECT_EQ(e.values[0], 1000u);
  EXPECT_EQ(e.values[1], 1001u);
  EXPECT_EQ(e.values[2], 1030u);
  EXPECT_EQ(e.values[3], 1031u);
}

// arm64 `struct big b` arrives as x0 = its address in the caller's frame: the
// value is read from the copied stack when the address falls inside it, and a
// DWARF constant or an unavailable value needs nothing from the sample.
TEST(SampleValues, DerefConstantAndUnavailable) {
  Sample s;
  s.regs_abi = 2;
  s.regs_mask = (uint64_t{1} << 0) | (uint64_t{1} << 31);
  s.nregs = 2;
  const uint64_t sp = 0x7ffff000;
  s.regs[0] = sp + 16;  // x0 -> 16 bytes above sp
  s.regs[1] = sp;       // sp (perf index 31)
  std::byte stack[48]{};
  uint64_t words[6] = {1, 2, 55, 66, 77, 88};
  std::memcpy(stack, words, sizeof words);
  s.stack = std::span<const std::byte>(stack, 48);
  s.stack_dyn_size = 48;

  auto deref = [](int32_t off, uint8_t size = 8) {
    ValueSpec v = reg(0);
    v.deref = true;
    v.deref_offset = off;
    v.size = size;
    v.type = "long";  // DWARF's: a raw memory read is fetched at the probe instead
    return v;
  };
  ValueSpec k{.name = "k", .source = ValueSource::Constant, .size = 8};
  k.constant = -3;
  ValueSpec gone{.name = "g", .source = ValueSource::Unavailable, .size = 8};
  ValueSpec slot_ref = slot(0);  // a stack slot holding an address: [sp+0] = 1 -> below sp
  slot_ref.deref = true;
  slot_ref.type = "long";
  ValueSpec specs[] = {deref(0), deref(8), deref(24, 4), deref(32), k, gone, slot_ref};
  Event e;
  // deref(32) points past the 48 copied bytes; slot_ref's address (1) is below sp.
  EXPECT_EQ(extract_values(s, specs, 31, e), 2u);
  EXPECT_EQ(e.values[0], 55u);
  EXPECT_EQ(e.values[1], 66u);
  EXPECT_EQ(e.values[2], 88u);
  EXPECT_EQ(e.values[3], 0u);
  EXPECT_EQ(static_cast<int64_t>(e.values[4]), -3);
  EXPECT_EQ(e.values[5], 0u);
  EXPECT_EQ(e.values[6], 0u);
}

}  // namespace
}  // namespace uprof
