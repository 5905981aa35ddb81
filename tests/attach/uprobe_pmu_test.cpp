#include "uprof/attach/uprobe_pmu.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/test_support.h"

namespace uprof {
namespace {

void write_file(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

// A fake sysfs PMU directory, as the kernel lays it out.
void make_pmu(const test::TempDir& dir, const std::string& type, const std::string& retprobe,
              const char* ref_ctr) {
  write_file(dir.file("type"), type);
  write_file(dir.file("format/retprobe"), retprobe);
  if (ref_ctr) write_file(dir.file("format/ref_ctr_offset"), ref_ctr);
}

TEST(PmuFormat, SingleBit) {
  auto f = parse_format_field("config:0\n");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->word, 0);
  EXPECT_EQ(f->lo, 0);
  EXPECT_EQ(f->hi, 0);
  EXPECT_EQ(f->width(), 1u);
  EXPECT_EQ(f->place(1), 1u);
}

TEST(PmuFormat, Range) {
  auto f = parse_format_field("config:32-63");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->lo, 32);
  EXPECT_EQ(f->hi, 63);
  EXPECT_EQ(f->width(), 32u);
  EXPECT_EQ(f->max_value(), 0xffffffffu);
  EXPECT_EQ(f->place(0x2040), 0x2040ull << 32);
  EXPECT_TRUE(f->fits(0xffffffffu));
  EXPECT_FALSE(f->fits(0x100000000ull));
}

TEST(PmuFormat, OtherWordsAndFullWidth) {
  auto f = parse_format_field("config2:0-63");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->word, 2);
  EXPECT_EQ(f->max_value(), ~0ull);
  EXPECT_EQ(parse_format_field("config1:5")->word, 1);
}

TEST(PmuFormat, Rejects) {
  for (const char* bad : {"", "config", "config:", "config:x", "config:3-1", "config:64",
                          "config:0-64", "config3:0", "period:1", "config:0-7,32-35", "config:-1"}) {
    auto f = parse_format_field(bad);
    EXPECT_FALSE(f.ok()) << "accepted '" << bad << "'";
    if (!f.ok()) {
      EXPECT_NE(f.error().message.find("attach: format field"), std::string::npos);
    }
  }
}

TEST(PmuSysfs, ReadsFakeDirectory) {
  test::TempDir dir;
  make_pmu(dir, "8\n", "config:0\n", "config:32-63\n");
  auto pmu = read_uprobe_pmu(dir.path());
  ASSERT_TRUE(pmu.ok()) << pmu.error().message;
  EXPECT_EQ(pmu->type, 8u);
  EXPECT_EQ(pmu->retprobe.lo, 0);
  ASSERT_TRUE(pmu->ref_ctr_offset.has_value());
  EXPECT_EQ(pmu->ref_ctr_offset->lo, 32);
  EXPECT_EQ(pmu->ref_ctr_offset->hi, 63);
}

TEST(PmuSysfs, BitPositionsAreTheKernels) {
  // If a kernel moved the retprobe bit, the attr must follow it.
  test::TempDir dir;
  make_pmu(dir, "7", "config:3", "config:40-63");
  auto pmu = read_uprobe_pmu(dir.path());
  ASSERT_TRUE(pmu.ok()) << pmu.error().message;
  EXPECT_EQ(pmu->type, 7u);
  EXPECT_EQ(pmu->retprobe.place(1), 8u);
  EXPECT_EQ(pmu->ref_ctr_offset->lo, 40);
}

TEST(PmuSysfs, OldKernelWithoutRefCtr) {
  test::TempDir dir;
  make_pmu(dir, "9", "config:0", nullptr);
  auto pmu = read_uprobe_pmu(dir.path());
  ASSERT_TRUE(pmu.ok()) << pmu.error().message;
  EXPECT_FALSE(pmu->ref_ctr_offset.has_value());
}

TEST(PmuSysfs, MissingPmuNamesKernelOptions) {
  test::TempDir dir;
  auto pmu = read_uprobe_pmu(dir.file("nope"));
  ASSERT_FALSE(pmu.ok());
  EXPECT_NE(pmu.error().message.find("CONFIG_UPROBES"), std::string::npos) << pmu.error().message;
  EXPECT_NE(pmu.error().message.find("CONFIG_UPROBE_EVENTS"), std::string::npos);
  EXPECT_NE(pmu.error().message.find(dir.file("nope")), std::string::npos);
}

TEST(PmuSysfs, BadFilesNameThePath) {
  test::TempDir dir;
  make_pmu(dir, "eight", "config:0", nullptr);
  auto pmu = read_uprobe_pmu(dir.path());
  ASSERT_FALSE(pmu.ok());
  EXPECT_NE(pmu.error().message.find("/type"), std::string::npos) << pmu.error().message;

  test::TempDir dir2;
  make_pmu(dir2, "8", "config:0-1", nullptr);  // a retprobe "bit" two bits wide
  pmu = read_uprobe_pmu(dir2.path());
  ASSERT_FALSE(pmu.ok());
  EXPECT_NE(pmu.error().message.find("format/retprobe"), std::string::npos) << pmu.error().message;

  test::TempDir dir3;
  make_pmu(dir3, "8", "config:0", "config:junk");
  pmu = read_uprobe_pmu(dir3.path());
  ASSERT_FALSE(pmu.ok());
  EXPECT_NE(pmu.error().message.find("attach: " + dir3.path() + "/format/ref_ctr_offset: format field"),
            std::string::npos)
      << pmu.error().message;
}

TEST(PmuSysfs, ThisMachine) {
  UPROF_REQUIRE_UPROBE_PMU();
  auto pmu = read_uprobe_pmu();
  ASSERT_TRUE(pmu.ok()) << pmu.error().message;
  EXPECT_GT(pmu->type, 5u);  // dynamic PMU types come after the fixed PERF_TYPE_* ones
  EXPECT_EQ(pmu->retprobe.width(), 1u);
}

}  // namespace
}  // namespace uprof
