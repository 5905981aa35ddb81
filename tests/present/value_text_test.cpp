#include "uprof/present/value_text.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "uprof/model/string_value.h"

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

namespace uprof {
namespace {

TEST(ValueText, StringsAreQuotedEscapedAndSayWhenCut) {
  EXPECT_EQ(quoted("key7", false), "\"key7\"");
  EXPECT_EQ(quoted("a\"b\\c\n\t\r", false), "\"a\\\"b\\\\c\\n\\t\\r\"");
  EXPECT_EQ(quoted(std::string("\x01\xff", 2), false), "\"\\x01\\xff\"");
  EXPECT_EQ(quoted("xxxx", true), "\"xxxx\"...");
  EXPECT_EQ(quoted("", false), "\"\"");
}

TEST(ValueText, AStringSlotPrintsItsPooledTextOrUnreadable) {
  ValueSpec s{.name = "key", .source = ValueSource::Register, .reg = 5};
  s.deref = true;
  s.kind = ValueKind::String;
  s.type = "const char *";
  const uint64_t id = recorded_strings().intern("key3", false);
  std::vector<ValueSpec> specs{s};
  EXPECT_EQ(value_text(specs, std::vector<uint64_t>{id}, 0, 0).text, "\"key3\"");
  EXPECT_EQ(value_text(specs, std::vector<uint64_t>{0}, 1, 0).text, "<unreadable>");  // a bad pointer
  ValueSpec n{.name = "%di", .source = ValueSource::Register, .reg = 5};
  std::vector<ValueSpec> plain{n};
  EXPECT_EQ(value_text(plain, std::vector<uint64_t>{0}, 1, 0).text, "<unavailable>");  // no memory read
}

}  // namespace
}  // namespace uprof
