// The one arm64 hint table (arch/arm64_hints.h), read as its two users read it.
#include "uprof/arch/arm64_hints.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

TEST(Arm64Hints, FoundByTheInstructionWord) {
  const Arm64Hint* bti_c = find_arm64_hint(0xd503245f);
  ASSERT_NE(bti_c, nullptr);
  EXPECT_EQ(bti_c->name, "bti c");
  EXPECT_TRUE(bti_c->steppable);
  EXPECT_EQ(bti_c->writes, 0);
  const Arm64Hint* paciasp = find_arm64_hint(0xd503233f);
  ASSERT_NE(paciasp, nullptr);
  EXPECT_EQ(paciasp->name, "paciasp");
  EXPECT_TRUE(paciasp->steppable);
  EXPECT_EQ(paciasp->writes, 30);
  const Arm64Hint* autiasp = find_arm64_hint(0xd50323bf);
  ASSERT_NE(autiasp, nullptr);
  EXPECT_FALSE(autiasp->steppable);  // the kernel refuses it
  EXPECT_EQ(find_arm64_hint(0xd503201f + (0x0a << 5))->writes, 17);  // pacib1716
  EXPECT_EQ(find_arm64_hint(0xd503207f), nullptr);  // yield: a hint the table does not list
  EXPECT_EQ(arm64_hint_number(0xd503207f), 3);
  EXPECT_EQ(arm64_hint_number(0xd65f03c0), std::nullopt);  // ret is no hint
}

TEST(Arm64Hints, NumbersAreUnique) {
  auto hints = arm64_hints();
  for (std::size_t i = 0; i < hints.size(); i++)
    for (std::size_t j = i + 1; j < hints.size(); j++) EXPECT_NE(hints[i].number, hints[j].number) << hints[i].name;
}

}  // namespace
}  // namespace uprof
