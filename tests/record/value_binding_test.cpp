#include "uprof/record/value_binding.h"

#include <gtest/gtest.h>

#include "uprof/resolve/usdt/usdt_args.h"

namespace uprof {
namespace {

// Parses a token (spec/) and binds it to an architecture (record/), as the plan does.
Result<std::optional<BoundValue>> parse_value_token(std::string_view tok, const ArchInfo& arch) {
  UPROF_ASSIGN(ValueRequest v, parse_value_request(tok));
  return bind_value(v, arch);
}

ValueSpec parse_ok(std::string_view tok, Arch a) {
  auto r = parse_value_token(tok, arch_info(a));
  EXPECT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r && r->has_value()) << tok;
  return r && *r ? (*r)->spec : ValueSpec{};
}

TEST(ValueBinding, X86Registers) {
  auto di = parse_ok("%di", Arch::X86_64);
  EXPECT_EQ(di.source, ValueSource::Register);
  EXPECT_EQ(di.reg, 5);
  EXPECT_EQ(di.name, "%di");
  EXPECT_EQ(parse_ok("%rsi", Arch::X86_64).reg, 4);
  auto named = parse_ok("b=%si", Arch::X86_64);
  EXPECT_EQ(named.name, "b");
  EXPECT_EQ(named.reg, 4);
}

TEST(ValueBinding, Arm64Registers) {
  EXPECT_EQ(parse_ok("%x1", Arch::Arm64).reg, 1);
  EXPECT_EQ(parse_ok("%lr", Arch::Arm64).reg, 30);
  auto e = parse_value_token("%di", arch_info(Arch::Arm64));
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message, "spec: value '%di': no register 'di' on arm64");
}

TEST(ValueBinding, ArgumentsFollowTheCallingConvention) {
  EXPECT_EQ(parse_ok("$arg1", Arch::X86_64).reg, 5);   // rdi
  EXPECT_EQ(parse_ok("$arg3", Arch::X86_64).reg, 3);   // rdx
  EXPECT_EQ(parse_ok("$arg6", Arch::X86_64).reg, 17);  // r9
  auto seventh = parse_ok("$arg7", Arch::X86_64);
  EXPECT_EQ(seventh.source, ValueSource::Stack);
  EXPECT_EQ(seventh.stack_offset, 8);  // above the return address
  auto ninth = parse_ok("$arg9", Arch::Arm64);
  EXPECT_EQ(ninth.source, ValueSource::Stack);
  EXPECT_EQ(ninth.stack_offset, 0);    // arm64: at [sp]
  EXPECT_EQ(parse_ok("$arg8", Arch::Arm64).reg, 7);
}

TEST(ValueBinding, RetvalStackAndComm) {
  auto rv = parse_value_token("$retval", arch_info(Arch::X86_64));
  ASSERT_TRUE(rv && *rv);
  EXPECT_TRUE((*rv)->for_return);
  EXPECT_EQ((*rv)->spec.source, ValueSource::ReturnValue);
  EXPECT_EQ((*rv)->spec.reg, 0);
  auto s2 = parse_ok("$stack2", Arch::X86_64);
  EXPECT_EQ(s2.stack_offset, 16);
  auto comm = parse_value_token("$comm", arch_info(Arch::X86_64));
  ASSERT_TRUE(comm && comm->has_value());
  EXPECT_EQ((*comm)->spec.source, ValueSource::Comm);  // the thread's name at the hit
  EXPECT_TRUE((*comm)->spec.is_string());
  EXPECT_EQ(parse_value_token("$bogus", arch_info(Arch::X86_64)).error().message,
            "spec: value '$bogus': unknown (use %REG, $argN, $stackN, $retval, $comm, @GLOBAL, a parameter or p->member)");
  EXPECT_FALSE(parse_value_token("$stackx", arch_info(Arch::X86_64)));
  EXPECT_FALSE(parse_value_token("=%di", arch_info(Arch::X86_64)));
}

TEST(ValueBinding, TracefsTypes) {
  auto s32 = parse_ok("a=%di:s32", Arch::X86_64);
  EXPECT_EQ(s32.name, "a");
  EXPECT_EQ(s32.size, 4);
  EXPECT_TRUE(s32.is_signed);
  auto u16 = parse_ok("%si:u16", Arch::X86_64);
  EXPECT_EQ(u16.size, 2);
  EXPECT_FALSE(u16.is_signed);
  EXPECT_FALSE(u16.hex);
  auto x = parse_ok("$retval:x64", Arch::Arm64);
  EXPECT_TRUE(x.hex);
  EXPECT_EQ(x.source, ValueSource::ReturnValue);
  EXPECT_EQ(parse_value_token("%di:s12", arch_info(Arch::X86_64)).error().message,
            "spec: value '%di:s12': unknown type 's12' (use s8..s64, u8..u64, x8..x64 or string)");
  EXPECT_FALSE(parse_value_token("%di:", arch_info(Arch::X86_64)));
}

TEST(ValueBinding, ReadsAskOnlyForWhatIsUsed) {
  const auto& x86 = arch_info(Arch::X86_64);
  auto n = reads_for({parse_ok("%di", Arch::X86_64), parse_ok("%si", Arch::X86_64)}, x86);
  EXPECT_EQ(n.regs_mask, (1u << 5) | (1u << 4));
  EXPECT_EQ(n.stack_bytes, 0u);
  auto s = reads_for({parse_ok("$stack2", Arch::X86_64)}, x86);
  EXPECT_EQ(s.regs_mask, 1u << 7);  // SP, to know where the stack bytes start
  EXPECT_EQ(s.stack_bytes, 24u);
  EXPECT_EQ(reads_for({}, x86).regs_mask, 0u);
}

// $argN at a USDT probe is the note's N-th argument spec, typed by its size and sign.
Result<std::optional<BoundValue>> bind_usdt(std::string_view tok, std::string_view note_args) {
  UPROF_ASSIGN(ValueRequest v, parse_value_request(tok));
  UPROF_ASSIGN(std::vector<UsdtArg> args, parse_usdt_args(Arch::X86_64, note_args));
  return bind_usdt_value(v, args, "fx:tick", arch_info(Arch::X86_64));
}

ValueSpec usdt_ok(std::string_view tok, std::string_view note_args) {
  auto r = bind_usdt(tok, note_args);
  EXPECT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r && r->has_value()) << tok;
  return r && *r ? (*r)->spec : ValueSpec{};
}

TEST(ValueBinding, UsdtArgumentsFromTheNote) {
  const char* note = "-1@%al 2@%dx -4@-20(%rbp) 8@$7 8@%rsi";
  auto c = usdt_ok("$arg1", note);
  EXPECT_EQ(c.source, ValueSource::Register);
  EXPECT_EQ(c.reg, 0);  // rax
  EXPECT_EQ(c.size, 1u);
  EXPECT_TRUE(c.is_signed);
  auto s = usdt_ok("$arg2", note);
  EXPECT_EQ(s.size, 2u);
  EXPECT_FALSE(s.is_signed);
  auto m = usdt_ok("$arg3", note);
  EXPECT_TRUE(m.deref);
  EXPECT_EQ(m.deref_offset, -20);
  EXPECT_EQ(m.reg, 6);  // rbp
  EXPECT_EQ(m.size, 4u);
  EXPECT_TRUE(m.reads_memory());
  auto k = usdt_ok("$arg4", note);
  EXPECT_EQ(k.source, ValueSource::Constant);
  EXPECT_EQ(k.constant, 7);
  // A string: in a register the text is behind it; in memory the pointer is read first.
  auto str = usdt_ok("name=$arg5:string", note);
  EXPECT_EQ(str.name, "name");
  EXPECT_TRUE(str.is_string());
  EXPECT_EQ(str.reg, 4);  // rsi
  EXPECT_TRUE(str.hops.empty());
  EXPECT_EQ(str.string_max, kDefaultStringMax);
  auto mstr = usdt_ok("$arg3:string", note);
  EXPECT_EQ(mstr.hops, std::vector<int32_t>{-20});
  EXPECT_EQ(mstr.deref_offset, 0);
  auto hex = usdt_ok("$arg2:x64", note);
  EXPECT_EQ(hex.size, 8u);
  EXPECT_TRUE(hex.hex);
  // Values other than $argN bind as at any probe.
  EXPECT_EQ(usdt_ok("%di", note).reg, 5);
}

TEST(ValueBinding, UsdtRefusalsSayWhy) {
  const char* note = "8@%rdi 8@$3 8@(%rax,%rdx,8)";
  EXPECT_EQ(bind_usdt("$retval", note).error().message,
            "spec: value '$retval': the USDT probe fx:tick has no return value");
  EXPECT_EQ(bind_usdt("key", note).error().message,
            "spec: value 'key': the arguments of the USDT probe fx:tick have no names: they are $arg1..$arg3");
  EXPECT_EQ(bind_usdt("$arg4", note).error().message, "spec: value '$arg4': the USDT probe fx:tick has 3 arguments");
  EXPECT_EQ(bind_usdt("$arg1", "").error().message, "spec: value '$arg1': the USDT probe fx:tick has no arguments");
  EXPECT_EQ(bind_usdt("$arg2:string", note).error().message,
            "spec: value '$arg2:string': argument 2 of fx:tick is the constant 3, not a string's address");
  EXPECT_EQ(bind_usdt("$arg3", note).error().message,
            "spec: value '$arg3': argument 3 of fx:tick is 8@(%rax,%rdx,8): an address with an index "
            "register, which uprof does not read");
}

// A global is read from the instruction pointer: at a probe on link-time address
// 0x1150, @visits at 0x4060 is 0x2f10 past %ip.
TEST(ValueBinding, GlobalsAreReadRelativeToTheProbesInstruction) {
  auto bind = [](std::string_view tok, uint64_t address, uint8_t size, Arch a = Arch::X86_64) {
    auto v = parse_value_request(tok);
    EXPECT_TRUE(v) << tok;
    std::get<GlobalRef>(v->target).address = address;
    std::get<GlobalRef>(v->target).size = size;
    return bind_global(*v, arch_info(a), 0x1150);
  };
  auto g = bind("@visits", 0x4060, 4);
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(g->spec.reg, 8);  // ip
  EXPECT_TRUE(g->spec.deref);
  EXPECT_EQ(g->spec.deref_offset, 0x4060 - 0x1150);
  EXPECT_TRUE(g->spec.hops.empty());
  EXPECT_EQ(g->spec.size, 4u);  // the symbol's
  EXPECT_FALSE(g->for_return);
  // A pointer global's string: the pointer is read at the global, the string behind it.
  auto s = bind("+0(@greeting):string", 0x4010, 8);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->spec.hops, std::vector<int32_t>{0x4010 - 0x1150});
  EXPECT_EQ(s->spec.deref_offset, 0);
  EXPECT_TRUE(s->spec.is_string());
  // A char array's string is where the global is; a type overrides the symbol's size.
  auto a = bind("@long_text:string", 0x4080, 0);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->spec.hops.empty());
  EXPECT_EQ(a->spec.deref_offset, 0x4080 - 0x1150);
  EXPECT_EQ(bind("@visits:u8", 0x4060, 4)->spec.size, 1u);
  EXPECT_EQ(bind("@big", 0x40000000, 0)->spec.size, 8u);  // no scalar size: 8 bytes
  // Below the probe, and on arm64 from pc.
  EXPECT_EQ(bind("@0x1000", 0x1000, 0)->spec.deref_offset, -0x150);
  EXPECT_EQ(bind("@x", 0x11000, 8, Arch::Arm64)->spec.reg, 32);
  EXPECT_EQ(bind("@far", 0x100001150, 8).error().message,
            "spec: value '@far': 0x100001150 is more than 2 GiB from the probe at 0x1150");
}

}  // namespace
}  // namespace uprof
