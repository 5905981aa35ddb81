// The capture plan as the BPF program reads it: each value slot's steps, for both
// arches' register layouts. Pure: no kernel.
#include "uprof/engine/bpf/bpf_capture_table.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

ValueSpec value(std::string name, ValueSource src, uint16_t reg = 0) {
  return ValueSpec{.name = std::move(name), .source = src, .reg = reg};
}

ProbeCapture probe_with(std::vector<ValueSpec> values) {
  return ProbeCapture{.probe = 3, .path = "/bin/x", .file_offset = 0x1139, .is_return = false, .reads = {},
                      .values = std::move(values)};
}

void expect_step(const uprof_bpf_step& s, uint8_t op, uint8_t size, uint16_t reg_off, int32_t imm) {
  EXPECT_EQ(s.op, op);
  EXPECT_EQ(s.size, size);
  EXPECT_EQ(s.reg_off, reg_off);
  EXPECT_EQ(s.imm, imm);
}

TEST(BpfCaptureTable, X86RegistersByTheirPtRegsOffset) {
  // di is word 14 of x86-64 pt_regs, si 13, ax 10, r8 9, sp 19.
  auto e = bpf_capture_entry(probe_with({value("a", ValueSource::Register, 5), value("b", ValueSource::Register, 4),
                                         value("$retval", ValueSource::ReturnValue, 0),
                                         value("%r8", ValueSource::Register, 16),
                                         value("%sp", ValueSource::Register, 7)}),
                             Arch::X86_64);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->probe, 3u);
  ASSERT_EQ(e->nslots, 5u);
  const uint16_t words[] = {14, 13, 10, 9, 19};
  for (int i = 0; i < 5; i++) {
    expect_step(e->slots[i].steps[0], UPROF_BPF_OP_REG, 8, static_cast<uint16_t>(words[i] * 8), 0);
    EXPECT_EQ(e->slots[i].steps[1].op, UPROF_BPF_OP_END);
  }
}

TEST(BpfCaptureTable, Arm64RegistersInPerfOrder) {
  // x0 at 0, x7 at 56, sp (perf 31) at 248, pc (32) at 256.
  auto e = bpf_capture_entry(probe_with({value("x0", ValueSource::Register, 0), value("x7", ValueSource::Register, 7),
                                         value("sp", ValueSource::Register, 31), value("pc", ValueSource::Register, 32)}),
                             Arch::Arm64);
  ASSERT_TRUE(e.ok()) << e.error().message;
  const uint16_t offs[] = {0, 56, 248, 256};
  for (int i = 0; i < 4; i++) expect_step(e->slots[i].steps[0], UPROF_BPF_OP_REG, 8, offs[i], 0);
}

TEST(BpfCaptureTable, StackSlotIsAReadAboveTheStackPointer) {
  ValueSpec s = value("$stack2", ValueSource::Stack);
  s.stack_offset = 16;
  s.size = 4;
  auto x86 = bpf_capture_entry(probe_with({s}), Arch::X86_64);
  ASSERT_TRUE(x86.ok());
  expect_step(x86->slots[0].steps[0], UPROF_BPF_OP_REG, 8, 19 * 8, 0);
  expect_step(x86->slots[0].steps[1], UPROF_BPF_OP_READ, 4, 0, 16);
  EXPECT_EQ(x86->slots[0].steps[2].op, UPROF_BPF_OP_END);
  auto arm = bpf_capture_entry(probe_with({s}), Arch::Arm64);
  ASSERT_TRUE(arm.ok());
  expect_step(arm->slots[0].steps[0], UPROF_BPF_OP_REG, 8, 31 * 8, 0);
}

TEST(BpfCaptureTable, DerefFollowsThePointer) {
  // A struct passed in memory whose address is in x0 (arm64), member at +4.
  ValueSpec reg = value("b", ValueSource::Register, 0);
  reg.deref = true;
  reg.deref_offset = 4;
  reg.size = 4;
  // A value whose address sits in a stack slot: read the slot (8 bytes), then the value.
  ValueSpec stack = value("c", ValueSource::Stack);
  stack.stack_offset = 8;
  stack.deref = true;
  stack.deref_offset = -8;
  stack.size = 2;
  auto e = bpf_capture_entry(probe_with({reg, stack}), Arch::Arm64);
  ASSERT_TRUE(e.ok());
  expect_step(e->slots[0].steps[0], UPROF_BPF_OP_REG, 8, 0, 0);
  expect_step(e->slots[0].steps[1], UPROF_BPF_OP_READ, 4, 0, 4);
  expect_step(e->slots[1].steps[0], UPROF_BPF_OP_REG, 8, 31 * 8, 0);
  expect_step(e->slots[1].steps[1], UPROF_BPF_OP_READ, 8, 0, 8);
  expect_step(e->slots[1].steps[2], UPROF_BPF_OP_READ, 2, 0, -8);
}

TEST(BpfCaptureTable, ConstantsAndUnavailableReadNothing) {
  ValueSpec c = value("n", ValueSource::Constant);
  c.constant = 7;
  auto e = bpf_capture_entry(probe_with({c, value("gone", ValueSource::Unavailable)}), Arch::X86_64);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->nslots, 2u);
  EXPECT_EQ(e->slots[0].steps[0].op, UPROF_BPF_OP_END);
  EXPECT_EQ(e->slots[1].steps[0].op, UPROF_BPF_OP_END);
}

TEST(BpfCaptureTable, RegisterOutsidePtRegsIsAnErrorNamingIt) {
  // x86-64 fs (perf 14) is not in pt_regs.
  auto e = bpf_capture_entry(probe_with({value("%fs", ValueSource::Register, 14)}), Arch::X86_64);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("/bin/x @ 0x1139"), std::string::npos) << e.error().message;
  EXPECT_NE(e.error().message.find("register fs"), std::string::npos) << e.error().message;
  EXPECT_NE(e.error().message.find("--engine perf"), std::string::npos) << e.error().message;
}

TEST(BpfCaptureTable, MoreSlotsThanARecordHoldsIsAnError) {
  std::vector<ValueSpec> many(UPROF_BPF_MAX_SLOTS + 1, value("%di", ValueSource::Register, 5));
  auto e = bpf_capture_entry(probe_with(many), Arch::X86_64);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("33 value slots"), std::string::npos) << e.error().message;
}

TEST(BpfCaptureTable, OneEntryPerProbeInPlanOrder) {
  CapturePlan plan{.arch = Arch::X86_64, .probes = {}};
  plan.probes.push_back(probe_with({value("a", ValueSource::Register, 5)}));
  plan.probes.back().probe = 0;
  plan.probes.push_back(probe_with({}));
  plan.probes.back().probe = 1;
  auto t = bpf_capture_table(plan);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->size(), 2u);
  EXPECT_EQ((*t)[0].probe, 0u);
  EXPECT_EQ((*t)[0].nslots, 1u);
  EXPECT_EQ((*t)[1].probe, 1u);
  EXPECT_EQ((*t)[1].nslots, 0u);
}

}  // namespace
}  // namespace uprof

namespace uprof {
namespace {

// "+0(+24(%di)):string" and "+32(%di):u32": pointers followed, then the string (or
// the number) at the last address; a probe with a string writes HIT_TEXT records.
TEST(BpfCaptureTable, MemoryReadsFollowPointersAndStringsComeLast) {
  ValueSpec label = value("label", ValueSource::Register, 5);
  label.hops = {24};
  label.deref = true;
  label.deref_offset = 0;
  label.kind = ValueKind::String;
  label.string_max = 64;
  ValueSpec weight = value("weight", ValueSource::Register, 5);
  weight.deref = true;
  weight.deref_offset = 32;
  weight.size = 4;
  auto e = bpf_capture_entry(probe_with({label, weight}), Arch::X86_64);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->text, 1u);
  expect_step(e->slots[0].steps[0], UPROF_BPF_OP_REG, 8, 14 * 8, 0);
  expect_step(e->slots[0].steps[1], UPROF_BPF_OP_READ, 8, 0, 24);
  expect_step(e->slots[0].steps[2], UPROF_BPF_OP_STR, 0, 66, 0);  // 64 kept, one to tell a cut, the NUL
  expect_step(e->slots[1].steps[1], UPROF_BPF_OP_READ, 4, 0, 32);
  EXPECT_EQ(e->slots[1].steps[2].op, UPROF_BPF_OP_END);

  auto numbers = bpf_capture_entry(probe_with({weight}), Arch::X86_64);
  ASSERT_TRUE(numbers.ok());
  EXPECT_EQ(numbers->text, 0u);  // the fixed-size records
}

// Memory behind an address may be in a page not faulted in yet: such a probe takes the
// sleepable program. Registers, a stack slot and the thread's name never fault.
TEST(BpfCaptureTable, OnlyReadsBehindAnAddressMayFault) {
  ValueSpec member = value("it->id", ValueSource::Register, 5);
  member.deref = true;
  member.deref_offset = 4;
  member.size = 4;
  member.type = "int";
  member.pointee = true;
  ValueSpec raw = value("+8(%di)", ValueSource::Register, 5);
  raw.deref = true;
  raw.deref_offset = 8;
  ValueSpec stack = value("$stack1", ValueSource::Stack);
  stack.stack_offset = 8;
  ValueSpec home = value("n", ValueSource::Register, 6);  // -O0: an int at [rbp-20], in the frame
  home.deref = true;
  home.deref_offset = -20;
  home.type = "int";
  for (const ValueSpec& v : {member, raw})
    EXPECT_EQ(bpf_capture_entry(probe_with({v}), Arch::X86_64)->faults, 1u) << v.name;
  for (const ValueSpec& v : {value("a", ValueSource::Register, 5), stack, home, value("$comm", ValueSource::Comm)})
    EXPECT_EQ(bpf_capture_entry(probe_with({v}), Arch::X86_64)->faults, 0u) << v.name;
}

TEST(BpfCaptureTable, CommIsCopiedIntoTheTextLikeAString) {
  ValueSpec comm{.name = "$comm", .source = ValueSource::Comm};
  comm.kind = ValueKind::String;
  comm.string_max = 16;
  auto e = bpf_capture_entry(probe_with({comm}), Arch::Arm64);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->text, 1u);
  expect_step(e->slots[0].steps[0], UPROF_BPF_OP_COMM, 0, 16, 0);
}

TEST(BpfCaptureTable, StringsBeyondTheTextRoomOrTooManyReadsAreRefused) {
  ValueSpec s = value("s", ValueSource::Register, 5);
  s.deref = true;
  s.kind = ValueKind::String;
  s.string_max = 1024;
  auto e = bpf_capture_entry(probe_with({s, s, s, s}), Arch::X86_64);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message, "/bin/x @ 0x1139: its strings take more than 4096 bytes a hit (lower --string-size)");
  ValueSpec deep = value("d", ValueSource::Stack);
  deep.stack_offset = 8;
  deep.hops = {0, 0};
  deep.deref = true;
  auto d = bpf_capture_entry(probe_with({deep}), Arch::X86_64);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("value 'd': more memory reads than the BPF engine's 4 steps"), std::string::npos);
}

// record --off-cpu: the probe's role in its thread's depth of calls goes into its entry.
TEST(BpfCaptureTable, OffCpuRole) {
  ProbeCapture entry = probe_with({value("a", ValueSource::Register, 5)});
  entry.offcpu = OffCpuRole::Enter;
  ProbeCapture ret = probe_with({});
  ret.offcpu = OffCpuRole::Leave;
  auto e = bpf_capture_entry(entry, Arch::X86_64), r = bpf_capture_entry(ret, Arch::X86_64),
       none = bpf_capture_entry(probe_with({}), Arch::X86_64);
  ASSERT_TRUE(e.ok() && r.ok() && none.ok());
  EXPECT_EQ(e->offcpu, unsigned{UPROF_BPF_OFFCPU_ENTER});
  EXPECT_EQ(r->offcpu, unsigned{UPROF_BPF_OFFCPU_LEAVE});
  EXPECT_EQ(none->offcpu, unsigned{UPROF_BPF_OFFCPU_NONE});
}

}  // namespace
}  // namespace uprof
