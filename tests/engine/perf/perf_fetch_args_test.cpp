// How the perf engine asks tracefs for values in memory, and reads them back from a
// sample's raw data. Pure: hand-built raw records, laid out as the format says.
#include "uprof/engine/perf/perf_fetch_args.h"

#include <gtest/gtest.h>

#include <cstring>

#include "uprof/model/string_value.h"

namespace uprof {
namespace {

ValueSpec reg(std::string name, uint16_t perf_reg) {
  return ValueSpec{.name = std::move(name), .source = ValueSource::Register, .reg = perf_reg};
}

ProbeCapture visit_probe() {
  ValueSpec name = reg("name", 5);  // +4(%di):string
  name.deref = true;
  name.deref_offset = 4;
  name.kind = ValueKind::String;
  name.string_max = 4;
  ValueSpec label = reg("label", 5);  // +0(+24(%di)):string
  label.hops = {24};
  label.deref = true;
  label.kind = ValueKind::String;
  label.string_max = 64;
  ValueSpec weight = reg("weight", 5);  // +32(%di):u32
  weight.deref = true;
  weight.deref_offset = 32;
  weight.size = 4;
  ValueSpec on_stack{.name = "p", .source = ValueSource::Stack, .stack_offset = 16};  // +0(+16($stack)):string
  on_stack.deref = true;
  on_stack.kind = ValueKind::String;
  on_stack.string_max = 8;
  return ProbeCapture{.probe = 2, .path = "/bin/strings", .file_offset = 0x1190, .is_return = false, .reads = {},
                      .values = {reg("n", 4), name, label, weight, on_stack}};
}

TEST(PerfFetchArgs, EachMemoryValueIsATracefsFetchArgument) {
  auto args = perf_fetch_args(visit_probe(), arch_info(Arch::X86_64));
  ASSERT_TRUE(args.ok()) << args.error().message;
  EXPECT_EQ(fetch_arg_definitions(*args),
            "s1=+4(%di):string s2=+0(+24(%di)):string u3=+32(%di):u32 c3=+32(%di):string s4=+0(+16($stack)):string");

  ValueSpec ret{.name = "$retval", .source = ValueSource::ReturnValue, .reg = 0};
  ret.deref = true;
  ret.kind = ValueKind::String;
  ProbeCapture arm{.probe = 0, .path = "/bin/a", .file_offset = 0x700, .is_return = true, .reads = {},
                   .values = {ret, reg("x1", 1)}};
  arm.values[1].deref = true;
  arm.values[1].deref_offset = -8;
  ValueSpec comm{.name = "$comm", .source = ValueSource::Comm};
  comm.kind = ValueKind::String;
  arm.values.push_back(comm);
  auto a = perf_fetch_args(arm, arch_info(Arch::Arm64));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(fetch_arg_definitions(*a), "s0=+0($retval):string u1=-8(%x1):u64 c1=-8(%x1):string s2=$comm");
}

// Fields as the kernel laid them out: s1 s2 u3 c3 s4 after the 16-byte head.
std::vector<TraceField> visit_fields() {
  return {{.name = "__probe_ip", .offset = 8, .size = 8, .data_loc = false},
          {.name = "s1", .offset = 16, .size = 4, .data_loc = true},
          {.name = "s2", .offset = 20, .size = 4, .data_loc = true},
          {.name = "u3", .offset = 24, .size = 4, .data_loc = false},
          {.name = "c3", .offset = 28, .size = 4, .data_loc = true},
          {.name = "s4", .offset = 32, .size = 4, .data_loc = true}};
}

void put_loc(std::vector<std::byte>& raw, uint32_t at, uint32_t off, uint32_t len) {
  uint32_t loc = len << 16 | off;
  std::memcpy(raw.data() + at, &loc, 4);
}

TEST(PerfFetchArgs, RawDataFillsStringsNumbersAndMarksFaults) {
  ProbeCapture p = visit_probe();
  auto args = perf_fetch_args(p, arch_info(Arch::X86_64));
  ASSERT_TRUE(args.ok());
  auto layout = raw_layout(*args, visit_fields(), p);
  ASSERT_TRUE(layout.ok()) << layout.error().message;
  ASSERT_EQ(layout->size(), 4u);  // the check joins its number
  EXPECT_EQ((*layout)[2].check_offset, 28);

  std::vector<std::byte> raw(36, std::byte{0});
  const std::string text = std::string("item-2\0", 7) + std::string("red\0", 4) + std::string("\0", 1);
  for (std::size_t i = 0; i < text.size(); i++) raw.push_back(static_cast<std::byte>(text[i]));
  put_loc(raw, 16, 36, 7);       // "item-2": longer than string_max 4, cut
  put_loc(raw, 20, 43, 4);       // "red"
  uint32_t weight = 190;
  std::memcpy(raw.data() + 24, &weight, 4);
  put_loc(raw, 28, 47, 1);       // the check: readable (an empty string at the address)
  put_loc(raw, 32, 48, 0);       // a fault: no bytes
  Event e;
  e.nvalues = 5;
  e.values[0] = 3;
  apply_raw(*layout, raw, e);
  EXPECT_EQ(e.values[0], 3u);
  EXPECT_EQ(string_value(e, 1).bytes, "item");
  EXPECT_TRUE(string_value(e, 1).cut);
  EXPECT_EQ(string_value(e, 2).bytes, "red");
  EXPECT_FALSE(string_value(e, 2).cut);
  EXPECT_EQ(e.values[3], 190u);
  EXPECT_EQ(e.missing, 1u << 4);

  // The number's address faulted: its check is empty, and the stale field is not believed.
  put_loc(raw, 28, 47, 0);
  Event f;
  f.nvalues = 5;
  apply_raw(*layout, raw, f);
  EXPECT_EQ(f.missing, (1u << 3) | (1u << 4));
  EXPECT_EQ(f.values[3], 0u);

  // A data_loc pointing past the raw data is a fault too, never a read past it.
  put_loc(raw, 16, 40, 200);
  Event g;
  g.nvalues = 5;
  apply_raw(*layout, raw, g);
  EXPECT_TRUE(g.missing & (1u << 1));
}

TEST(PerfFetchArgs, AFieldTheKernelDidNotLayOutIsAnError) {
  ProbeCapture p = visit_probe();
  auto args = perf_fetch_args(p, arch_info(Arch::X86_64));
  ASSERT_TRUE(args.ok());
  auto fields = visit_fields();
  fields.pop_back();
  auto layout = raw_layout(*args, fields, p);
  ASSERT_FALSE(layout.ok());
  EXPECT_EQ(layout.error().message,
            "attach: /bin/strings @ 0x1190: the kernel's format has no field 's4' for +0(+16($stack)):string");
}

}  // namespace
}  // namespace uprof
