#include "uprof/spec/value_request.h"

#include <gtest/gtest.h>

#include "uprof/spec/probe_spec.h"

namespace uprof {
namespace {

ValueRequest parse_ok(std::string_view tok) {
  auto r = parse_value_request(tok);
  EXPECT_TRUE(r) << tok << ": " << r.error().message;
  return r ? *r : ValueRequest{};
}

TEST(ValueRequest, EachSpellingNamesOneKindOfValue) {
  EXPECT_EQ(parse_ok("%di").target, ValueTarget{RegisterRef{"di"}});
  EXPECT_EQ(parse_ok("%x0").target, ValueTarget{RegisterRef{"x0"}});  // bound to an arch later
  EXPECT_EQ(parse_ok("$arg7").target, ValueTarget{ArgumentRef{7}});
  EXPECT_EQ(parse_ok("$stack3").target, ValueTarget{StackRef{3}});
  EXPECT_EQ(parse_ok("$retval").target, ValueTarget{ReturnValueRef{}});
  EXPECT_EQ(parse_ok("$params").target, ValueTarget{AllParamsRef{}});
  EXPECT_EQ(parse_ok("$comm").target, ValueTarget{CommRef{}});
  EXPECT_EQ(parse_ok("len").target, ValueTarget{ParamRef{"len"}});
  EXPECT_EQ(parse_ok("_n2").target, ValueTarget{ParamRef{"_n2"}});
}

TEST(ValueRequest, LabelsAndTracefsTypes) {
  auto v = parse_ok("b=%si:u16");
  EXPECT_EQ(v.label, "b");
  EXPECT_EQ(v.target, ValueTarget{RegisterRef{"si"}});
  ASSERT_TRUE(v.type);
  EXPECT_EQ(*v.type, (RawType{.size = 2, .is_signed = false, .hex = false}));
  EXPECT_EQ(v.display_name(), "b");
  EXPECT_EQ(parse_ok("%dx:x64").display_name(), "%dx");
  EXPECT_EQ(*parse_ok("$retval:s32").type, (RawType{.size = 4, .is_signed = true, .hex = false}));
  EXPECT_FALSE(parse_ok("%di").type);
}

TEST(ValueRequest, MemoryReadsNestAsTracefsSpellsThem) {
  auto v = parse_ok("+8(%di)");
  EXPECT_EQ(v.target, ValueTarget{RegisterRef{"di"}});
  EXPECT_EQ(v.memory, (std::vector<int32_t>{8}));
  EXPECT_FALSE(v.type);
  auto s = parse_ok("name=+0(+24(%di)):string");
  EXPECT_EQ(s.label, "name");
  EXPECT_EQ(s.target, ValueTarget{RegisterRef{"di"}});
  EXPECT_EQ(s.memory, (std::vector<int32_t>{24, 0}));  // innermost first
  ASSERT_TRUE(s.type);
  EXPECT_TRUE(s.type->string);
  EXPECT_EQ(parse_ok("-16($stack2):u32").memory, (std::vector<int32_t>{-16}));
  EXPECT_EQ(parse_ok("-16($stack2):u32").target, ValueTarget{StackRef{2}});
  EXPECT_EQ(parse_ok("+0x10($arg2)").memory, (std::vector<int32_t>{16}));
  auto plain = parse_ok("$arg1:ustring");
  EXPECT_TRUE(plain.type->string);
  EXPECT_TRUE(plain.memory.empty());
  EXPECT_EQ(parse_ok("+4(%di):string").display_name(), "+4(%di)");
}

TEST(ValueRequest, AccessPathsFollowAParameterAsCWritesThem) {
  using K = AccessStep::Kind;
  auto v = parse_ok("it->name");
  EXPECT_EQ(v.target, (ValueTarget{ParamRef{.name = "it", .path = {{K::Deref, "", 0}, {K::Member, "name", 0}}}}));
  EXPECT_TRUE(v.wants_dwarf());
  EXPECT_EQ(v.display_name(), "it->name");
  EXPECT_EQ(parse_ok("*p").target, (ValueTarget{ParamRef{.name = "p", .path = {{K::Deref, "", 0}}}}));
  EXPECT_EQ(parse_ok("a[2]").target, (ValueTarget{ParamRef{.name = "a", .path = {{K::Index, "", 2}}}}));
  // A leading * applies last, as in C: *p->q is *(p->q).
  EXPECT_EQ(parse_ok("*p->q").target,
            (ValueTarget{ParamRef{.name = "p", .path = {{K::Deref, "", 0}, {K::Member, "q", 0}, {K::Deref, "", 0}}}}));
  EXPECT_EQ(parse_ok("s.x[1]").target,
            (ValueTarget{ParamRef{.name = "s", .path = {{K::Member, "x", 0}, {K::Index, "", 1}}}}));
  EXPECT_FALSE(parse_value_request("p->").ok());
  EXPECT_FALSE(parse_value_request("p[x]").ok());
  EXPECT_EQ(parse_value_request("n=p->x").error().message,
            "spec: value 'n=p->x': a parameter is typed and named by DWARF (write 'p->x' alone)");
}

TEST(ValueRequest, BadMemoryReadsAreRefusedWithTheToken) {
  EXPECT_EQ(parse_value_request("+8(%di").error().message,
            "spec: value '+8(%di': expected +OFFSET(VALUE), as in +8(%di)");
  EXPECT_EQ(parse_value_request("+x(%di)").error().message,
            "spec: value '+x(%di)': bad offset '+x' (a decimal or 0x number)");
  EXPECT_EQ(parse_value_request("+0(len)").error().message,
            "spec: value '+0(len)': memory reads take a register, $argN, $stackN, $retval or @GLOBAL");
  EXPECT_EQ(parse_value_request("+0(+0(+0(+0(%di))))").error().message,
            "spec: value '+0(+0(+0(+0(%di))))': more than 3 memory reads in one value");
}

TEST(ValueRequest, WhatDwarfAnswers) {
  EXPECT_TRUE(parse_ok("a").wants_dwarf());
  EXPECT_TRUE(parse_ok("$params").wants_dwarf());
  EXPECT_TRUE(parse_ok("$retval").wants_dwarf());      // typed by DWARF when it can be
  EXPECT_FALSE(parse_ok("$retval:u32").wants_dwarf()); // the user typed it
  EXPECT_FALSE(parse_ok("r=$retval").wants_dwarf());
  EXPECT_FALSE(parse_ok("%di").wants_dwarf());
}

TEST(ValueRequest, GlobalsBySymbolOrAddress) {
  auto g = parse_ok("@counter");
  EXPECT_EQ(g.target, (ValueTarget{GlobalRef{.symbol = "counter", .address = {}, .offset = 0, .size = 0}}));
  EXPECT_EQ(g.display_name(), "@counter");
  EXPECT_EQ(parse_ok("@table+16").target, (ValueTarget{GlobalRef{.symbol = "table", .address = {}, .offset = 16, .size = 0}}));
  EXPECT_EQ(parse_ok("@0x4010:u32").target, (ValueTarget{GlobalRef{.symbol = {}, .address = 0x4010, .offset = 0, .size = 0}}));
  auto s = parse_ok("name=+0(@greeting):string");
  EXPECT_EQ(s.label, "name");
  EXPECT_EQ(s.memory, std::vector<int32_t>{0});
  EXPECT_TRUE(s.type && s.type->string);
  EXPECT_EQ(std::get<GlobalRef>(s.target).symbol, "greeting");
  EXPECT_EQ(parse_value_request("@").error().message,
            "spec: value '@': unknown (use %REG, $argN, $stackN, $retval, $comm, @GLOBAL, a parameter or p->member)");
  EXPECT_EQ(parse_value_request("@9lives").error().message,
            "spec: value '@9lives': expected @SYMBOL, @SYMBOL+OFFSET or @0xADDRESS (a global of the probed file)");
  EXPECT_EQ(parse_value_request("@t+x").error().message, "spec: value '@t+x': bad offset '+x' after @t");
}

TEST(ValueRequest, ErrorsNameTheToken) {
  EXPECT_EQ(parse_value_request("$bogus").error().message,
            "spec: value '$bogus': unknown (use %REG, $argN, $stackN, $retval, $comm, @GLOBAL, a parameter or p->member)");
  EXPECT_EQ(parse_value_request("%di:s12").error().message,
            "spec: value '%di:s12': unknown type 's12' (use s8..s64, u8..u64, x8..x64 or string)");
  EXPECT_EQ(parse_value_request("=%di").error().message, "spec: value '=%di': expected NAME=VALUE");
  EXPECT_EQ(parse_value_request("$arg0").error().message,
            "spec: value '$arg0': expected $argN with N from 1 to 64");
  EXPECT_EQ(parse_value_request("$stack4096").error().message,
            "spec: value '$stack4096': expected $stackN with N from 0 to 4095");
  EXPECT_EQ(parse_value_request("x=a").error().message,
            "spec: value 'x=a': a parameter is typed and named by DWARF (write 'a' alone)");
  EXPECT_FALSE(parse_value_request("%di:"));
  EXPECT_FALSE(parse_value_request("a:s32"));
}

TEST(ValueRequest, ASpecParsesItsValuesOnce) {
  auto s = parse_probe_spec("add a=%di $retval:x64 b");
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->values.size(), 3u);
  EXPECT_EQ(s->values[0].label, "a");
  EXPECT_EQ(s->values[1].target, ValueTarget{ReturnValueRef{}});
  EXPECT_EQ(s->values[2].target, ValueTarget{ParamRef{"b"}});
  // A bad value is the spec's error, before anything is resolved.
  EXPECT_EQ(parse_probe_spec("add %di:q8").error().message,
            "spec: value '%di:q8': unknown type 'q8' (use s8..s64, u8..u64, x8..x64 or string)");
}

}  // namespace
}  // namespace uprof
