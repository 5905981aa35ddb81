#include "uprof/attach/event_attr.h"

#include <gtest/gtest.h>

#include <ctime>

namespace uprof {
namespace {

UprobePmu fake_pmu() {
  return UprobePmu{.type = 8,
                   .retprobe = ConfigField{.word = 0, .lo = 0, .hi = 0},
                   .ref_ctr_offset = ConfigField{.word = 0, .lo = 32, .hi = 63}};
}

constexpr uint64_t kX86DiSiAx = (1ull << 5) | (1ull << 4) | (1ull << 0);
constexpr uint64_t kArm64All = (1ull << 33) - 1;

TEST(EventAttr, EntryProbeIdentity) {
  UprobeTarget t{.path = "/work/build/mytest", .offset = 0x1130};
  perf_event_attr a = build_uprobe_attr(fake_pmu(), t, ProbeReads{});
  EXPECT_EQ(a.size, sizeof(perf_event_attr));
  EXPECT_EQ(a.type, 8u);
  EXPECT_EQ(a.config, 0u);
  EXPECT_EQ(a.config1, reinterpret_cast<uint64_t>(t.path.c_str()));  // attr.uprobe_path
  EXPECT_EQ(a.config2, 0x1130u);                                      // attr.probe_offset: file offset
}

TEST(EventAttr, ReturnProbeSetsTheParsedBit) {
  UprobeTarget t{.path = "/bin/true", .offset = 0x40, .is_return = true};
  EXPECT_EQ(build_uprobe_attr(fake_pmu(), t, {}).config, 1u);
  UprobePmu moved = fake_pmu();
  moved.retprobe = ConfigField{.word = 0, .lo = 3, .hi = 3};
  EXPECT_EQ(build_uprobe_attr(moved, t, {}).config, 8u);
}

TEST(EventAttr, RefCtrOffsetGoesInItsField) {
  UprobeTarget t{.path = "/usr/bin/python3", .offset = 0x2f1a0, .is_return = true,
                 .ref_ctr_offset = 0x4c5d8};
  EXPECT_EQ(build_uprobe_attr(fake_pmu(), t, {}).config, (0x4c5d8ull << 32) | 1u);
  EXPECT_TRUE(check_uprobe_target(fake_pmu(), t).ok());
}

TEST(EventAttr, CheckTargetRefusesWhatTheAttrCannotSay) {
  UprobeTarget big{.path = "/x", .offset = 1, .ref_ctr_offset = 0x1'0000'0000ull};
  auto st = check_uprobe_target(fake_pmu(), big);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("32-bit"), std::string::npos) << st.error().message;

  UprobePmu old = fake_pmu();
  old.ref_ctr_offset.reset();
  UprobeTarget semaphore{.path = "/x", .offset = 1, .ref_ctr_offset = 0x10};
  st = check_uprobe_target(old, semaphore);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("4.20"), std::string::npos) << st.error().message;
  // Without the field the builder leaves config alone rather than guess.
  EXPECT_EQ(build_uprobe_attr(old, semaphore, {}).config, 0u);

  EXPECT_FALSE(check_uprobe_target(fake_pmu(), UprobeTarget{}).ok());
}

TEST(EventAttr, SamplingEveryHit) {
  perf_event_attr a = build_uprobe_attr(fake_pmu(), {.path = "/x"}, {});
  EXPECT_EQ(a.sample_period, 1u);
  EXPECT_EQ(a.freq, 0u);
  EXPECT_EQ(a.sample_type, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
  EXPECT_EQ(a.sample_regs_user, 0u);
  EXPECT_EQ(a.sample_stack_user, 0u);
  EXPECT_EQ(a.sample_id_all, 1u);
}

TEST(EventAttr, ClockAndInheritance) {
  perf_event_attr a = build_uprobe_attr(fake_pmu(), {.path = "/x"}, {});
  EXPECT_EQ(a.use_clockid, 1u);
  EXPECT_EQ(a.clockid, CLOCK_MONOTONIC);
  EXPECT_EQ(a.inherit, 1u);
}

TEST(EventAttr, StartModes) {
  perf_event_attr launched = build_uprobe_attr(fake_pmu(), {.path = "/x"}, {});
  EXPECT_EQ(launched.disabled, 1u);
  EXPECT_EQ(launched.enable_on_exec, 1u);
  perf_event_attr attached =
      build_uprobe_attr(fake_pmu(), {.path = "/x"}, {}, AttrOptions{.start = StartMode::Explicit});
  EXPECT_EQ(attached.disabled, 1u);
  EXPECT_EQ(attached.enable_on_exec, 0u);
}

TEST(EventAttr, WakeupWatermark) {
  perf_event_attr def = build_uprobe_attr(fake_pmu(), {.path = "/x"}, {});
  EXPECT_EQ(def.watermark, 0u);
  EXPECT_EQ(def.wakeup_watermark, 0u);
  perf_event_attr a = build_uprobe_attr(fake_pmu(), {.path = "/x"}, {},
                                        AttrOptions{.wakeup_watermark = 65536});
  EXPECT_EQ(a.watermark, 1u);
  EXPECT_EQ(a.wakeup_watermark, 65536u);
}

TEST(EventAttr, LostSamplesAreCountedByDefault) {
  EXPECT_EQ(build_uprobe_attr(fake_pmu(), {.path = "/x"}, {}).read_format,
            uint64_t{PERF_FORMAT_LOST});
  EXPECT_EQ(build_uprobe_attr(fake_pmu(), {.path = "/x"}, {}, AttrOptions{.count_lost = false})
                .read_format,
            0u);
}

TEST(EventAttr, X86RegisterMask) {
  perf_event_attr a =
      build_uprobe_attr(fake_pmu(), {.path = "/x"}, ProbeReads{.regs_mask = kX86DiSiAx});
  EXPECT_EQ(a.sample_type & PERF_SAMPLE_REGS_USER, uint64_t{PERF_SAMPLE_REGS_USER});
  EXPECT_EQ(a.sample_regs_user, 0x31u);
  EXPECT_EQ(a.sample_type & PERF_SAMPLE_STACK_USER, 0u);
}

TEST(EventAttr, Arm64RegisterMaskIsTheCallers) {
  perf_event_attr a =
      build_uprobe_attr(fake_pmu(), {.path = "/x"}, ProbeReads{.regs_mask = kArm64All});
  EXPECT_EQ(a.sample_regs_user, 0x1'ffff'ffffull);
}

TEST(EventAttr, UserStackRoundedAndCapped) {
  EXPECT_EQ(stack_request_size(0), 0u);
  EXPECT_EQ(stack_request_size(1), 8u);
  EXPECT_EQ(stack_request_size(16), 16u);
  EXPECT_EQ(stack_request_size(17), 24u);
  EXPECT_EQ(stack_request_size(65535), kMaxStackBytes);
  EXPECT_EQ(stack_request_size(1u << 30), kMaxStackBytes);
  perf_event_attr a =
      build_uprobe_attr(fake_pmu(), {.path = "/x"}, ProbeReads{.stack_bytes = 12});
  EXPECT_EQ(a.sample_type & PERF_SAMPLE_STACK_USER, uint64_t{PERF_SAMPLE_STACK_USER});
  EXPECT_EQ(a.sample_stack_user, 16u);
  EXPECT_EQ(a.sample_type & PERF_SAMPLE_REGS_USER, 0u);
}

TEST(EventAttr, TracepointVariant) {
  perf_event_attr a = build_tracepoint_attr(1234, ProbeReads{.regs_mask = kX86DiSiAx},
                                            AttrOptions{.start = StartMode::Explicit});
  EXPECT_EQ(a.type, uint32_t{PERF_TYPE_TRACEPOINT});
  EXPECT_EQ(a.config, 1234u);
  EXPECT_EQ(a.config1, 0u);
  EXPECT_EQ(a.config2, 0u);
  EXPECT_EQ(a.sample_regs_user, kX86DiSiAx);
  EXPECT_EQ(a.inherit, 1u);
  EXPECT_EQ(a.enable_on_exec, 0u);
}

TEST(EventAttr, NothingElseSet) {
  // Fields left at zero matter too: exclude_* would drop user-space hits, freq
  // would turn sample_period into a frequency.
  perf_event_attr a = build_uprobe_attr(fake_pmu(), {.path = "/x"}, {});
  EXPECT_EQ(a.exclude_user, 0u);
  EXPECT_EQ(a.exclude_kernel, 0u);
  EXPECT_EQ(a.pinned, 0u);
  EXPECT_EQ(a.exclusive, 0u);
  EXPECT_EQ(a.mmap, 0u);
  EXPECT_EQ(a.comm, 0u);
  EXPECT_EQ(a.task, 0u);
  EXPECT_EQ(a.write_backward, 0u);
}

}  // namespace
}  // namespace uprof
