// What every engine does with a filled event (model/capture_plan.h): a frame probe's
// last slot becomes Event::frame, and a tail-call exit's values are marked missing.
#include "uprof/model/capture_plan.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

Event filled(std::initializer_list<uint64_t> values, uint32_t missing = 0) {
  Event e;
  for (uint64_t v : values) e.values[e.nvalues++] = v;
  e.missing = missing;
  return e;
}

TEST(FinishSample, TheStackPointerSlotMovesToTheFrame) {
  ProbeCapture c;
  c.frame = true;
  Event e = filled({7, 0x7ffd1000});
  finish_sample(c, e);
  EXPECT_EQ(e.nvalues, 1);
  EXPECT_EQ(e.values[0], 7u);
  EXPECT_EQ(e.values[1], 0u);
  EXPECT_EQ(e.frame, 0x7ffd1000u);
  EXPECT_EQ(e.missing, 0u);
}

TEST(FinishSample, AStackPointerThatCouldNotBeReadIsNoFrame) {
  ProbeCapture c;
  c.frame = true;
  Event e = filled({7, 0}, 0b10);
  finish_sample(c, e);
  EXPECT_EQ(e.frame, 0u);
  EXPECT_EQ(e.missing, 0u);  // the value slots that remain were all read
}

TEST(FinishSample, ATailCallExitHasNoReturnValueYet) {
  ProbeCapture c;
  c.frame = true;
  c.tail_call = true;
  Event e = filled({123, 0x7ffd1000});
  finish_sample(c, e);
  EXPECT_EQ(e.nvalues, 1);
  EXPECT_EQ(e.missing, 0b1u);
  EXPECT_EQ(e.frame, 0x7ffd1000u);
}

TEST(FinishSample, OtherProbesAreLeftAsTheyAre) {
  ProbeCapture c;
  Event e = filled({1, 2, 3}, 0b100);
  finish_sample(c, e);
  EXPECT_EQ(e.nvalues, 3);
  EXPECT_EQ(e.missing, 0b100u);
  EXPECT_EQ(e.frame, 0u);
}

}  // namespace
}  // namespace uprof
