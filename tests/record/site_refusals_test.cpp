// Planning on tests/fixtures/refused.c, without root: a glob loses the functions whose
// site is refused, each with its line; a spec naming one fails with it; a refused first
// instruction that can be stepped past moves the probe, and says so.
#include "uprof/record/site_refusals.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "support/test_support.h"
#include "uprof/record/recording_plan.h"
#include "uprof/resolve/elf/elf_file.h"
#include "uprof/resolve/elf/offset.h"
#include "uprof/util/hex.h"

namespace uprof {
namespace {

using test::fixture;

RecordRequest request(const std::vector<std::string>& specs, bool exact_site = false) {
  RecordRequest r;
  for (const auto& text : specs) {
    auto s = parse_probe_spec(text);
    EXPECT_TRUE(s) << s.error().message;
    if (s) r.specs.push_back(*s);
  }
  r.command = {fixture("x86_64", "refused"), "1"};
  r.exact_site = exact_site;
  return r;
}

// The file offset of a function of the fixture.
uint64_t offset_of(const std::string& name) {
  auto elf = ElfFile::open(fixture("x86_64", "refused"));
  EXPECT_TRUE(elf.ok());
  if (!elf) return 0;
  for (const auto& s : elf->symbols())
    if (s.name == name && s.value) return vaddr_to_offset(elf->loads(), s.value).value_or(0);
  ADD_FAILURE() << "no symbol " << name;
  return 0;
}

std::vector<std::string> functions_of(const RecordingPlan& plan) {
  std::vector<std::string> out;
  for (const auto& p : plan.probes)
    if (std::find(out.begin(), out.end(), p.function) == out.end()) out.push_back(p.function);
  std::sort(out.begin(), out.end());
  return out;
}

std::string lines_with(const std::vector<std::string>& notes, const std::string& word) {
  std::string s;
  for (const auto& n : notes)
    if (n.find(word) != std::string::npos) s += n + "\n";
  return s;
}

TEST(SiteRefusals, AGlobSkipsARefusedFunctionWithOneLine) {
  auto plan = plan_recording(request({"rf_*"}));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(functions_of(*plan), (std::vector<std::string>{"rf_moves", "rf_plain"}));
  const std::string exe = fixture("x86_64", "refused");
  EXPECT_EQ(lines_with(plan->notes, "skipped rf_stays"),
            "skipped rf_stays (" + exe + ", offset " + hex(offset_of("rf_stays")) + "): the kernel refuses to probe its first instruction, "
            "lock incl (%rdi) [f0 ff 07]: lock prefix (ENOTSUPP)\n");
  EXPECT_NE(lines_with(plan->notes, "skipped rf_vex").find("uprof does not probe its first instruction, vpcmpeqb"),
            std::string::npos)
      << lines_with(plan->notes, "rf_vex");
}

TEST(SiteRefusals, ARefusedFirstInstructionIsSteppedPastAndSaysSo) {
  auto plan = plan_recording(request({"rf_moves"}));
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->probes.size(), 2u);  // the entry and the return, both at the new site
  EXPECT_EQ(plan->probes[0].file_offset, offset_of("rf_moves") + 3);
  EXPECT_EQ(plan->probes[1].file_offset, offset_of("rf_moves") + 3);
  const std::string line = lines_with(plan->notes, "rf_moves");
  EXPECT_NE(line.find("the kernel refuses to probe its first instruction, lock incl (%rdi) [f0 ff 07]: lock prefix "
                      "(ENOTSUPP); probed at +0x3 instead, past lock incl (%rdi)"),
            std::string::npos)
      << line;
}

TEST(SiteRefusals, ASpecNamingARefusedFunctionFails) {
  auto stays = plan_recording(request({"rf_stays"}));
  ASSERT_FALSE(stays);
  EXPECT_EQ(stays.error().message, "record: rf_stays (" + fixture("x86_64", "refused") + ", offset " +
                                       hex(offset_of("rf_stays")) + "): the kernel refuses to probe its first instruction, lock incl "
                                       "(%rdi) [f0 ff 07]: lock prefix (ENOTSUPP)");
  // Where the site could move, --exact-site keeps it at the symbol: refused.
  auto exact = plan_recording(request({"rf_moves"}, true));
  ASSERT_FALSE(exact);
  EXPECT_NE(exact.error().message.find("rf_moves"), std::string::npos);
  // A return probe sits at the entry's site: refused the same.
  EXPECT_FALSE(plan_recording(request({"rf_stays%return"})));
  // uprof's own refusal fails a spec too.
  auto vex = plan_recording(request({"rf_vex"}));
  ASSERT_FALSE(vex);
  EXPECT_NE(vex.error().message.find("uprof does not probe"), std::string::npos) << vex.error().message;
}

TEST(SiteRefusals, AGlobWithNothingLeftFails) {
  auto plan = plan_recording(request({"rf_st*"}));
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("no site the specs name can be probed"), std::string::npos)
      << plan.error().message;
}

}  // namespace
}  // namespace uprof
