// Parameter locations on the args fixtures (tests/fixtures/args/), compiled by
// the test build with gcc 12 at -O0 and -O2 for x86-64 and aarch64: at each
// function's entry, after the -O0 prologue (dwarf_entry_breakpoints, from the
// line table), inside the prologue, at the return, and at -O2 after a
// parameter's register was reused.
#include "uprof/resolve/dwarf/param_location.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "support/test_support.h"
#include "uprof/resolve/dwarf/dwarf_index.h"
#include "uprof/resolve/elf/elf_file.h"

namespace uprof {

static void PrintTo(const LocationPiece& p, std::ostream* os) {
  static const char* kWhere[] = {"reg", "stack", "const"};
  *os << kWhere[static_cast<int>(p.where)] << "{perf_reg=" << p.perf_reg << " stack_offset=" << p.stack_offset
      << " size=" << p.size << " constant=" << p.constant << " deref=" << p.deref << "@" << p.deref_offset << "}";
}

namespace {

using K = ValueType::Kind;
using W = LocationPiece::Where;
using Pieces = std::vector<LocationPiece>;

LocationPiece reg(unsigned perf, uint32_t size, bool deref = false, int32_t off = 0) {
  return {.where = W::Register, .perf_reg = static_cast<uint16_t>(perf), .size = size, .deref = deref,
          .deref_offset = off};
}
LocationPiece stack(int32_t off, uint32_t size, bool deref = false) {
  return {.where = W::Stack, .stack_offset = off, .size = size, .deref = deref};
}

// The ELF file must outlive the index built from it (members die in reverse order).
struct Loaded {
  ElfFile file;
  DwarfIndex index;
};

Loaded load(const std::string& path) {
  auto file = ElfFile::open(path);
  EXPECT_TRUE(file.ok()) << file.error().message;
  auto index = DwarfIndex::build(file->elf(), path);
  EXPECT_TRUE(index.ok()) << index.error().message;
  return {std::move(file).value(), std::move(index).value()};
}

class ParamLocationTest : public ::testing::TestWithParam<std::string> {
 protected:
  Loaded fixture(const std::string& name) const { return load(test::fixture(GetParam(), name)); }
  bool x86() const { return GetParam() == "x86_64"; }
  const ArchInfo& info() const { return arch_info(x86() ? Arch::X86_64 : Arch::Arm64); }
  unsigned arg(std::size_t i) const { return info().int_arg_regs[i]; }
  unsigned perf(std::string_view name) const { return find_reg_by_name(info(), name)->perf_index; }

  static const DwarfFunction& fn(const Loaded& l, const std::string& name) {
    auto found = l.index.named(name);
    EXPECT_FALSE(found.empty()) << name;
    static const DwarfFunction none;
    return found.empty() ? none : *found.front();
  }
  static FunctionParams at(const Loaded& l, const DwarfFunction& f, uint64_t pc, const ParamsOptions& o = {}) {
    auto r = params_at(l.index, l.file.elf(), l.file.arch(), f.entry, pc, o);
    EXPECT_TRUE(r.ok()) << f.name << ": " << r.error().message;
    return r.ok() ? std::move(r).value() : FunctionParams{};
  }
  static FunctionParams entry(const Loaded& l, const std::string& name) { return at(l, fn(l, name), fn(l, name).entry); }
  // The first statement after the prologue, from the line table.
  static uint64_t body(const Loaded& l, const DwarfFunction& f) {
    Dwarf_Die die;
    Dwarf_Addr* bk = nullptr;
    EXPECT_TRUE(dwarf_offdie(l.index.dwarf(), f.die_offset, &die));
    int n = dwarf_entry_breakpoints(&die, &bk);
    uint64_t best = 0;
    for (int i = 0; i < n; i++)
      if (bk[i] > f.entry && (!best || bk[i] < best)) best = bk[i];
    std::free(bk);
    EXPECT_NE(best, 0u) << f.name;
    return best;
  }
  uint64_t last_insn(const DwarfFunction& f) const { return f.high - info().insn_align; }
};

// f1 .. f10 at their entries: x86-64 rdi rsi rdx rcx r8 r9 then rsp+8, +16, ...;
// arm64 x0-x7 then sp+0, +8, ...
TEST_P(ParamLocationTest, IntegerArgumentsAtEntry) {
  for (auto opt : {"args_O0", "args_O2"}) {
    SCOPED_TRACE(opt);
    auto l = fixture(opt);
    for (int n = 1; n <= 10; n++) {
      auto fp = entry(l, "f" + std::to_string(n));
      ASSERT_EQ(fp.params.size(), static_cast<std::size_t>(n));
      for (std::size_t i = 0; i < fp.params.size(); i++) {
        auto& p = fp.params[i];
        SCOPED_TRACE(fp.function + " " + p.name);
        EXPECT_EQ(p.name, "a" + std::to_string(i + 1));
        ASSERT_TRUE(p.available) << p.reason;
        std::size_t nregs = info().int_arg_regs.size();
        auto want = i < nregs ? reg(arg(i), p.type.size)
                              : stack(static_cast<int32_t>(info().stack_args_offset + 8 * (i - nregs)), p.type.size);
        EXPECT_EQ(p.pieces, Pieces{want});
      }
    }
    auto f10 = entry(l, "f10");
    EXPECT_EQ(f10.params[9].type.size, 4u);  // int a10
    if (x86()) {
      EXPECT_EQ(f10.params[6].pieces, Pieces{stack(8, 8)});
      EXPECT_EQ(f10.params[9].pieces, Pieces{stack(32, 4)});
    } else {
      EXPECT_EQ(f10.params[8].pieces, Pieces{stack(0, 8)});
      EXPECT_EQ(f10.params[9].pieces, Pieces{stack(8, 4)});
    }
  }
}

TEST_P(ParamLocationTest, TypesAndSizes) {
  for (auto opt : {"args_O0", "args_O2"}) {
    SCOPED_TRACE(opt);
    auto l = fixture(opt);
    auto u = entry(l, "f_unsigned");
    EXPECT_EQ(u.params[0].type.kind, K::Unsigned);
    EXPECT_EQ(u.params[0].type.name, "unsigned long");
    EXPECT_EQ(u.params[1].type.size, 4u);
    EXPECT_EQ(u.return_type.kind, K::Unsigned);
    auto neg = entry(l, "f_neg");
    EXPECT_EQ(neg.params[0].type.kind, K::Signed);
    EXPECT_EQ(neg.params[0].pieces, Pieces{reg(arg(0), 4)});
    EXPECT_EQ(neg.params[1].pieces, Pieces{reg(arg(1), 8)});
    auto bc = entry(l, "f_bool_char");
    EXPECT_EQ(bc.params[0].type.kind, K::Bool);
    for (int i = 1; i < 4; i++) {
      EXPECT_EQ(bc.params[i].type.kind, K::Char) << bc.params[i].type.name;  // char is unsigned on arm64: still Char
      EXPECT_EQ(bc.params[i].pieces, Pieces{reg(arg(i), 1)});
    }
    auto e = entry(l, "f_enum").params[0];
    EXPECT_EQ(e.type.kind, K::Enum);
    EXPECT_EQ(e.type.name, "enum color");
    EXPECT_EQ(e.type.size, 4u);
    using E = std::vector<std::pair<int64_t, std::string>>;
    EXPECT_EQ(e.type.enumerators, (E{{0, "RED"}, {1, "GREEN"}, {7, "BLUE"}, {-2, "DARK"}}));
    auto ptr = entry(l, "f_ptr").params[0];
    EXPECT_EQ(ptr.type.kind, K::Pointer);
    EXPECT_EQ(ptr.type.name, "const long*");
    EXPECT_EQ(ptr.type.size, 8u);
    auto pair = entry(l, "f_pair").params[0];
    EXPECT_EQ(pair.type.kind, K::Struct);
    EXPECT_EQ(pair.type.name, "struct pair");
    EXPECT_EQ(pair.type.size, 16u);
    EXPECT_EQ(entry(l, "f_big").params[0].type.size, 40u);
    EXPECT_EQ(entry(l, "f_float").params[0].type.kind, K::Float);
  }
}

TEST_P(ParamLocationTest, StructsFloatsAndReturnValuesAtEntry) {
  for (auto opt : {"args_O0", "args_O2"}) {
    SCOPED_TRACE(opt);
    auto l = fixture(opt);
    EXPECT_EQ(entry(l, "f_pair").params[0].pieces, (Pieces{reg(arg(0), 8), reg(arg(1), 8)}));
    // 40 bytes: x86-64 copies it to the stack, arm64 passes a pointer to a copy.
    EXPECT_EQ(entry(l, "f_big").params[0].pieces, Pieces{x86() ? stack(8, 40) : reg(arg(0), 40, true)});
    auto fl = entry(l, "f_float");
    EXPECT_FALSE(fl.params[0].available);
    EXPECT_EQ(fl.params[0].reason, "in a floating-point register");
    EXPECT_EQ(fl.params[1].pieces, Pieces{reg(arg(0), 4)});  // int i: the first integer register
    EXPECT_TRUE(fl.return_value.empty());                    // a double comes back in xmm0 / v0
    auto mixed = entry(l, "f_mixed");                        // struct { double d; long l; }
    if (x86()) {
      EXPECT_FALSE(mixed.params[0].available);  // xmm0 + rdi
      EXPECT_NE(mixed.params[0].reason.find("floating-point register"), std::string::npos);
      EXPECT_EQ(mixed.params[1].pieces, Pieces{reg(arg(1), 8)});
    } else {
      EXPECT_EQ(mixed.params[0].pieces, (Pieces{reg(0, 8), reg(1, 8)}));  // not homogeneous: x0:x1
      EXPECT_EQ(mixed.params[1].pieces, Pieces{reg(2, 8)});
    }
    EXPECT_EQ(entry(l, "f1").return_value, Pieces{reg(info().return_reg, 4)});
    EXPECT_EQ(entry(l, "f_ret_pair").return_value, (Pieces{reg(info().return_reg, 8), reg(perf(x86() ? "dx" : "x1"), 8)}));
    auto big = entry(l, "f_ret_big");
    // x86-64: the caller's buffer comes in rdi (so x moves to rsi) and goes back in rax; arm64 uses x8.
    EXPECT_EQ(big.params[0].pieces, Pieces{reg(arg(x86() ? 1 : 0), 8)});
    EXPECT_EQ(big.return_value, x86() ? Pieces{reg(perf("ax"), 40, true)} : Pieces{});
  }
}

TEST_P(ParamLocationTest, DwarfAgreesWithTheCallingConventionAtEntry) {
  // Wherever gcc's own DWARF places a parameter at the entry, the ABI model
  // must say the same (-O2 registers and stack slots, -O0 stack arguments).
  ParamsOptions dwarf_only, abi_only;
  dwarf_only.at_entry = ParamsOptions::AtEntry::DwarfOnly;
  abi_only.at_entry = ParamsOptions::AtEntry::AbiOnly;
  int compared = 0;
  for (auto opt : {"args_O0", "args_O2", "args_cpp_O0", "args_cpp_O2"}) {
    auto l = fixture(opt);
    for (auto& f : l.index.functions()) {
      if (f.params.empty()) continue;
      auto d = at(l, f, f.entry, dwarf_only), a = at(l, f, f.entry, abi_only);
      if (d.clone) continue;
      ASSERT_EQ(d.params.size(), a.params.size());
      for (std::size_t i = 0; i < d.params.size(); i++) {
        if (!d.params[i].available) continue;
        SCOPED_TRACE(std::string(opt) + " " + f.name + " " + d.params[i].name);
        EXPECT_TRUE(a.params[i].available) << a.params[i].reason;
        EXPECT_EQ(d.params[i].pieces, a.params[i].pieces);
        compared++;
      }
    }
  }
  EXPECT_GT(compared, 60);
}

TEST_P(ParamLocationTest, AfterThePrologueAtO0) {
  auto l = fixture("args_O0");
  auto& add = fn(l, "add");
  auto fp = at(l, add, body(l, add));
  ASSERT_EQ(fp.params.size(), 2u);
  ASSERT_TRUE(fp.params[0].available) << fp.params[0].reason;
  if (x86()) {
    // DW_OP_fbreg -20 / -24 with CFA = rbp+16.
    EXPECT_EQ(fp.params[0].pieces, Pieces{reg(perf("bp"), 4, true, -4)});
    EXPECT_EQ(fp.params[1].pieces, Pieces{reg(perf("bp"), 4, true, -8)});
  } else {
    // DW_OP_fbreg -4 / -8 with CFA = sp+16.
    EXPECT_EQ(fp.params[0].pieces, Pieces{stack(12, 4)});
    EXPECT_EQ(fp.params[1].pieces, Pieces{stack(8, 4)});
  }
  // Every parameter of every function has its home after the prologue: in
  // the frame (arm64: sp-relative; x86-64: rbp-relative), never a register.
  for (auto& f : l.index.functions()) {
    if (f.params.empty()) continue;
    for (auto& p : at(l, f, body(l, f)).params) {
      SCOPED_TRACE(f.name + " " + p.name);
      ASSERT_TRUE(p.available) << p.reason;
      for (auto& piece : p.pieces) {
        if (!x86() && f.name == "f_big") {
          EXPECT_EQ(piece, reg(perf("x19"), 40, true));  // the pointer copied to x19
        } else if (x86()) {
          EXPECT_EQ(piece.perf_reg, perf("bp"));
          EXPECT_TRUE(piece.deref);
        } else {
          EXPECT_EQ(piece.where, W::Stack);
        }
      }
    }
  }
  auto f10 = at(l, fn(l, "f10"), body(l, fn(l, "f10")));
  if (x86()) EXPECT_EQ(f10.params[9].pieces, Pieces{reg(perf("bp"), 4, true, 40)});  // rsp+32 at entry
  else EXPECT_EQ(f10.params[9].pieces, Pieces{stack(72, 4)});  // sp+8 at entry, then `sub sp, sp, #64`
}

TEST_P(ParamLocationTest, InsideThePrologueAndAtTheReturnAtO0) {
  auto l = fixture("args_O0");
  auto& add = fn(l, "add");
  // After `push %rbp` / `sub sp, sp, #16`: the homes are not written yet.
  uint64_t inside = add.entry + (x86() ? 1 : 4);
  ASSERT_LT(inside, body(l, add));
  for (auto& p : at(l, add, inside).params) {
    EXPECT_FALSE(p.available);
    EXPECT_EQ(p.reason, "frame base not valid before the prologue");
  }
  // At `ret` the frame is gone: the homes are below the stack pointer.
  for (auto& p : at(l, add, last_insn(add)).params) {
    EXPECT_FALSE(p.available);
    EXPECT_NE(p.reason.find("below the stack pointer"), std::string::npos) << p.reason;
  }
  if (!x86()) {  // the epilogue has reloaded the caller's x19
    auto& big = fn(l, "f_big");
    auto b = at(l, big, last_insn(big)).params[0];
    EXPECT_FALSE(b.available);
    EXPECT_NE(b.reason.find("register x19 holds the caller's value"), std::string::npos) << b.reason;
  }
}

TEST_P(ParamLocationTest, ReusedRegisterAtO2IsNotReadBack) {
  // f_clobber(a, b) passes b to consume() in the register `a` came in.
  auto l = fixture("args_O2");
  auto& f = fn(l, "f_clobber");
  auto start = at(l, f, f.entry);
  EXPECT_EQ(start.params[0].pieces, Pieces{reg(arg(0), 8)});
  auto end = at(l, f, last_insn(f));
  auto& a = end.params[0];
  EXPECT_FALSE(a.available && !a.pieces.empty() && a.pieces[0] == reg(arg(0), 8));
  EXPECT_FALSE(a.available);
  EXPECT_EQ(a.reason, "entry value of a register not captured");
  // Nowhere after the call is `a` reported in the first argument register.
  bool after_call = false;
  for (uint64_t pc = f.entry; pc < f.high; pc += info().insn_align) {
    auto fp = at(l, f, pc);
    if (!fp.params[0].available) after_call = true;
    if (!after_call || !fp.params[0].available) continue;
    for (auto& piece : fp.params[0].pieces) EXPECT_NE(piece.perf_reg, arg(0)) << std::hex << pc;
  }
  EXPECT_TRUE(after_call);
}

TEST_P(ParamLocationTest, CppThisReferencesAndClassesByReference) {
  for (auto opt : {"args_cpp_O0", "args_cpp_O2"}) {
    SCOPED_TRACE(opt);
    auto l = fixture(opt);
    auto add = entry(l, "shapes::Acc::add");
    EXPECT_EQ(add.function, "shapes::Acc::add");
    ASSERT_EQ(add.params.size(), 3u);
    EXPECT_TRUE(add.params[0].artificial);
    EXPECT_EQ(add.params[0].name, "this");
    EXPECT_EQ(add.params[0].type.kind, K::Pointer);
    EXPECT_EQ(add.params[0].type.name, "shapes::Acc*");
    EXPECT_EQ(add.params[0].pieces, Pieces{reg(arg(0), 8)});
    EXPECT_FALSE(add.params[1].artificial);
    EXPECT_EQ(add.params[1].pieces, Pieces{reg(arg(1), 8)});
    EXPECT_EQ(add.params[2].pieces, Pieces{reg(arg(2), 4)});
    // A copy constructor makes Tracked non-trivial: passed by invisible reference.
    auto t = entry(l, "shapes::by_tracked");
    EXPECT_EQ(t.params[0].type.kind, K::Struct);
    EXPECT_EQ(t.params[0].pieces, Pieces{reg(arg(0), 8, true)});
    EXPECT_EQ(t.params[1].pieces, Pieces{reg(arg(1), 8)});
    auto r = entry(l, "shapes::by_ref").params[0];
    EXPECT_EQ(r.type.kind, K::Pointer);
    EXPECT_EQ(r.type.name, "const long&");
  }
}

TEST_P(ParamLocationTest, ClonesAndRecursion) {
  auto o2 = fixture("args_O2");
  auto& scale = fn(o2, "scale");  // scale.constprop.0: k is always 3
  auto s = at(o2, scale, scale.entry);
  EXPECT_TRUE(s.clone);
  EXPECT_EQ(s.params[0].pieces, Pieces{reg(arg(0), 8)});
  LocationPiece three{.where = W::Constant, .size = 8, .constant = 3};
  EXPECT_EQ(s.params[1].pieces, Pieces{three});
  EXPECT_FALSE(entry(o2, "f_recurse").clone);
  auto o0 = fixture("args_O0");
  EXPECT_FALSE(entry(o0, "scale").clone);
  for (auto* l : {&o0, &o2}) {
    auto r = entry(*l, "f_recurse");
    EXPECT_EQ(r.params[0].pieces, Pieces{reg(arg(0), 4)});
    EXPECT_EQ(r.return_value, Pieces{reg(info().return_reg, 4)});
  }
}

TEST_P(ParamLocationTest, SeparateDebugFileTakesCfiFromTheBinary) {
  test::TempDir tmp;
  std::string bin = test::fixture(GetParam(), "args_O0"), dbg = tmp.file("args.debug");
  std::string objcopy = x86() ? "objcopy" : "aarch64-linux-gnu-objcopy";
  auto r = test::run_shell(objcopy + " --only-keep-debug '" + bin + "' '" + dbg + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto whole = load(bin), debug = load(dbg);
  auto& add = fn(debug, "add");
  uint64_t pc = body(debug, add);
  // The debug file's .eh_frame is SHT_NOBITS: without the binary no CFA, no frame base.
  auto alone = params_at(debug.index, debug.file.elf(), debug.file.arch(), add.entry, pc);
  ASSERT_TRUE(alone.ok());
  EXPECT_FALSE(alone->params[0].available);
  EXPECT_NE(alone->params[0].reason.find("no CFI row"), std::string::npos) << alone->params[0].reason;
  ParamsOptions with_binary;
  with_binary.elf_with_cfi = whole.file.elf();
  auto joined = params_at(debug.index, debug.file.elf(), debug.file.arch(), add.entry, pc, with_binary);
  ASSERT_TRUE(joined.ok());
  auto direct = at(whole, fn(whole, "add"), pc);
  for (std::size_t i = 0; i < 2; i++) {
    EXPECT_TRUE(joined->params[i].available) << joined->params[i].reason;
    EXPECT_EQ(joined->params[i].pieces, direct.params[i].pieces);
  }
}

TEST_P(ParamLocationTest, ErrorsNameTheFunction) {
  auto l = fixture("args_O2");
  auto& add = fn(l, "add");
  auto outside = params_at(l.index, l.file.elf(), l.file.arch(), add.entry, add.high + 64);
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.error().message.find("params: add ("), std::string::npos) << outside.error().message;
  EXPECT_NE(outside.error().message.find("is outside it"), std::string::npos) << outside.error().message;
  EXPECT_FALSE(params_at(l.index, l.file.elf(), l.file.arch(), add.entry + 1, add.entry + 1).ok());
  // The convenience overload builds its own index and agrees.
  auto own = params_at(l.file.elf(), l.file.arch(), add.entry, add.entry);
  ASSERT_TRUE(own.ok()) << own.error().message;
  EXPECT_EQ(own->params[1].pieces, entry(l, "add").params[1].pieces);
}

// Go (tests/fixtures/go/gw.go, Go's own build): main.work(depth, seed int) at its entry
// is where Go's DWARF puts it, in Go's ABIInternal registers (rax rbx; x0 x1), and its
// result (`~r0`, which Go lists as a parameter with DW_AT_variable_parameter) is none.
TEST_P(ParamLocationTest, GoArgumentsAreWhereGosDwarfSaysAndItsResultIsNone) {
  const std::string path = test::fixture(GetParam(), "go_gw");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no Go toolchain when the tests were built (" << path
                                                   << " missing): scripts/setup.sh installs golang-go";
  auto l = load(path);
  auto fp = entry(l, "main.work");
  ASSERT_EQ(fp.params.size(), 2u);
  EXPECT_EQ(fp.params[0].name, "depth");
  EXPECT_EQ(fp.params[1].name, "seed");
  for (std::size_t i = 0; i < 2; i++) {
    ASSERT_TRUE(fp.params[i].available) << fp.params[i].reason;
    EXPECT_EQ(fp.params[i].pieces, Pieces{reg(info().go_int_arg_regs[i], 8)});
  }
}

INSTANTIATE_TEST_SUITE_P(BothArches, ParamLocationTest, ::testing::Values("x86_64", "arm64"),
                         [](auto& p) { return p.param; });

}  // namespace
}  // namespace uprof
