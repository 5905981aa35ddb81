#include "uprof/present/value_text.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace uprof {
namespace {

// struct pair { int x; int y; } in one 8-byte slot.
ValueSpec pair_spec() {
  ValueSpec v{.name = "p", .source = ValueSource::Register, .reg = 5, .stack_offset = 0, .size = 8};
  v.kind = ValueKind::Struct;
  v.type = "struct pair";
  v.total_size = 8;
  v.members = {{.name = "x", .offset = 0, .size = 4, .kind = ValueKind::Integer, .is_signed = true},
               {.name = "y", .offset = 4, .size = 4, .kind = ValueKind::Integer, .is_signed = true}};
  return v;
}

TEST(ValueText, StructMembersFromTheSlotBytes) {
  std::vector<ValueSpec> specs{pair_spec()};
  uint64_t slot = (uint64_t{static_cast<uint32_t>(-5)} << 32) | 5u;
  EXPECT_EQ(value_text(specs, std::vector<uint64_t>{slot}, 0, 0).text, "{x=5, y=-5}");
}

TEST(ValueText, MemberOffsetNearTwoToThe32IsSkippedNotRead) {
  // From a damaged data file (report_fuzz): offset 0xffffffff + size 8 wrapped to 7
  // in a 32-bit sum, passed the bounds check, and memcpy read 4 GiB past the bytes.
  std::vector<ValueSpec> specs{pair_spec()};
  specs[0].members[1].offset = 0xffffffffu;
  specs[0].members[1].size = 8;
  EXPECT_EQ(value_text(specs, std::vector<uint64_t>{5}, 0, 0).text, "{x=5}");
}

}  // namespace
}  // namespace uprof
