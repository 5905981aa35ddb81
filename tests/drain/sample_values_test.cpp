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
  EXPECT_EQ(extract_values(s, specs, e), 0u);
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
  EXPECT_EQ(extract_values(s, specs, e), 2u);
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
  EXPECT_EQ(extract_values(s, specs, e), 0u);
  EXPECT_EQ(e.values[0], 1000u);
  EXPECT_EQ(e.values[1], 1001u);
  EXPECT_EQ(e.values[2], 1030u);
  EXPECT_EQ(e.values[3], 1031u);
}

}  // namespace
}  // namespace uprof
