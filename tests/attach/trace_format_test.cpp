// A tracefs event's format file, as 6.18 writes it for a uprobe with fetch arguments
// (p:test/t1 /bin/true:0x1000 s0=+0(%di):string u1=+8(%si):u32). Pure.
#include "uprof/attach/trace_format.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

constexpr const char* kFormat =
    "name: t1\n"
    "ID: 2326\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"
    "\tfield:__data_loc char[] s0;\toffset:16;\tsize:4;\tsigned:1;\n"
    "\tfield:u32 u1;\toffset:20;\tsize:4;\tsigned:0;\n"
    "\tfield:char comm[16];\toffset:24;\tsize:16;\tsigned:0;\n"
    "\n"
    "print fmt: \"(%lx) s0=\\\"%s\\\" u1=%u\", REC->__probe_ip, __get_str(s0), REC->u1\n";

TEST(TraceFormat, EachFieldWithItsOffsetSizeAndWhetherItIsADataLoc) {
  auto f = parse_trace_format(kFormat, "t1/format");
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ(f->size(), 8u);
  EXPECT_EQ((*f)[4], (TraceField{.name = "__probe_ip", .offset = 8, .size = 8, .data_loc = false}));
  EXPECT_EQ((*f)[5], (TraceField{.name = "s0", .offset = 16, .size = 4, .data_loc = true}));
  EXPECT_EQ((*f)[6], (TraceField{.name = "u1", .offset = 20, .size = 4, .data_loc = false}));
  EXPECT_EQ((*f)[7].name, "comm");  // an array's name, without its [16]
}

TEST(TraceFormat, ABrokenFieldIsNamedWithItsLine) {
  auto f = parse_trace_format("format:\n\tfield:u32 u1;\toffset:x;\tsize:4;\n", "e3/format");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message, "attach: e3/format: line 2: cannot read the field '\tfield:u32 u1;\toffset:x;\tsize:4;'");
  EXPECT_EQ(parse_trace_format("name: x\n", "e4/format").error().message, "attach: e4/format: no fields");
}

}  // namespace
}  // namespace uprof
