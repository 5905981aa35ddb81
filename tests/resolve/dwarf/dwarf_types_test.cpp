// Type spelling and the less common DWARF shapes (a .cold range, an out-of-line
// copy of an inline function, nested classes, anonymous namespaces), on small
// programs compiled here with the same compilers the fixtures use.
#include "uprof/resolve/dwarf/dwarf_types.h"

#include <dwarf.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "support/test_support.h"
#include "uprof/resolve/dwarf/dwarf_index.h"
#include "uprof/resolve/elf/elf_file.h"

namespace uprof {
namespace {

constexpr const char* kCSource = R"(
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
typedef unsigned long ulong_t;
typedef int (*cb_t)(int);
struct point { int x, y; };
union u { int i; float f; };
enum color { RED, GREEN };
struct holder { const struct { int a; } *anon; };

static inline int sq(int x) { return x * x; }
__attribute__((noinline)) int use_sq(int x) { return sq(x) + 1; }
int (*get_sq(void))(int) { return sq; }  /* keeps an out-of-line copy of sq */

__attribute__((cold, noinline)) void report(int x) { fprintf(stderr, "rare %d\n", x); }
__attribute__((noinline)) int with_cold(int x) {
  int r = x * 3;
  if (x == 12345) {
    report(x);
    for (int i = 0; i < x; i++) { printf("rare %d %d\n", x, i); r += i; }
    abort();
  }
  return r;
}

__attribute__((noinline)) int types(const char* s, volatile int* vp, char* const cp, ulong_t u,
    struct point p, struct point* pp, union u uu, enum color c, int arr[4], cb_t cb,
    int (*raw)(int, long), struct holder* h, int (*pa)[3], _Bool b, unsigned short us,
    long long ll, const void* cv, unsigned char uc, signed char sc) {
  return s[0] + *vp + cp[0] + (int)u + p.x + pp->y + uu.i + c + arr[0] + cb(1) + raw(1, 2) +
         h->anon->a + (*pa)[0] + b + us + (int)ll + (cv != 0) + uc + sc;
}
__attribute__((noinline)) int vsum(int n, ...) {
  va_list ap; va_start(ap, n);
  int s = 0;
  for (int i = 0; i < n; i++) s += va_arg(ap, int);
  va_end(ap);
  return s;
}
__attribute__((noinline)) void nothing(void) {}
int main(int argc, char** argv) {
  (void)argv;
  nothing();
  return with_cold(argc) + use_sq(argc) + vsum(2, 1, 2) + get_sq()(argc);
}
)";

constexpr const char* kCppSource = R"(
#include <cstddef>
namespace ns {
struct Klass {
  int base;
  int get() const;
  int inl(int x) { return base * x + 3; }
  struct Inner { int v; int twice() const; };
};
int Klass::get() const { return base; }
int Klass::Inner::twice() const { return v * 2; }
namespace { __attribute__((noinline)) int hidden(int x) { return x ^ 5; } }
}  // namespace ns
typedef int (*handler_t)(int);
enum class Mode { A, B };
union U { int i; float f; };
__attribute__((noinline)) int refs(int& r, const int& cr, int&& rr, const char* const* argv,
    ns::Klass& k, handler_t h, int (*raw)(int, ...), int (ns::Klass::*pmf)() const,
    int ns::Klass::*pm, Mode m, U u, std::nullptr_t np, double arr[3][4], volatile long* vl) {
  return r + cr + rr + argv[0][0] + k.get() + h(1) + raw(1) + (k.*pmf)() + k.*pm + (int)m + u.i +
         (np == nullptr) + (int)arr[1][2] + (int)*vl;
}
int main(int argc, char**) {
  ns::Klass k{argc};
  ns::Klass::Inner in{argc};
  return k.get() + in.twice() + ns::hidden(argc) + k.inl(argc);
}
)";

// gas describes functions written in assembly by where they are, not by
// their parameters (x86-64 and aarch64 both spell return `ret`).
constexpr const char* kAsmSource = R"(
  .text
  .globl asm_fn
  .type asm_fn, %function
asm_fn:
  ret
  .size asm_fn, .-asm_fn
  .section .note.GNU-stack,"",%progbits
)";
constexpr const char* kAsmMain = "int asm_fn(void);\nint main(void) { return asm_fn(); }\n";

struct Built {
  std::string path;
  std::unique_ptr<ElfFile> file;
  DwarfIndex index;
  std::multimap<std::string, uint64_t> syms;
};

std::multimap<std::string, uint64_t> nm_symbols(const std::string& path) {
  auto r = test::run_shell("nm '" + path + "'");
  std::multimap<std::string, uint64_t> out;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string addr, type, name;
    if (fields >> addr >> type >> name) out.emplace(name, std::stoull(addr, nullptr, 16));
  }
  return out;
}

uint64_t nm_address(const Built& b, const std::string& name) {
  auto it = b.syms.find(name);
  EXPECT_NE(it, b.syms.end()) << name;
  return it == b.syms.end() ? 0 : it->second;
}

const DwarfFunction* only(const Built& b, const std::string& name) {
  auto found = b.index.named(name);
  EXPECT_EQ(found.size(), 1u) << name;
  return found.empty() ? nullptr : found.front();
}

class DwarfTypesTest : public ::testing::TestWithParam<std::string> {
 protected:
  // Compiles `source` with the compiler for this arch; the result is kept for
  // the other tests of the run.
  Built* build(const std::string& name, const char* source, bool cpp, const std::string& flags,
               const char* asm_source = nullptr) {
    std::string key = GetParam() + "/" + name;
    auto& slot = cache()[key];
    if (slot) return slot.get();
    std::string cc = GetParam() == "arm64" ? (cpp ? "aarch64-linux-gnu-g++" : "aarch64-linux-gnu-gcc")
                                           : (cpp ? "g++" : "gcc");
    if (test::run_shell("command -v " + cc).exit_code != 0) return nullptr;
    std::string src = dir().file(GetParam() + "_" + name + (cpp ? ".cpp" : ".c"));
    std::string out = dir().file(GetParam() + "_" + name);
    std::ofstream(src) << source;
    std::string srcs = "'" + src + "'";
    if (asm_source) {
      std::string asm_src = dir().file(GetParam() + "_" + name + ".S");
      std::ofstream(asm_src) << asm_source;
      srcs += " '" + asm_src + "'";
    }
    auto r = test::run_shell(cc + " -w -g " + flags + " -o '" + out + "' " + srcs);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code != 0) return nullptr;
    auto b = std::make_unique<Built>();
    b->path = out;
    auto file = ElfFile::open(out);
    EXPECT_TRUE(file.ok()) << file.error().message;
    if (!file) return nullptr;
    b->file = std::make_unique<ElfFile>(std::move(file).value());
    auto index = DwarfIndex::build(b->file->elf(), out);
    EXPECT_TRUE(index.ok()) << index.error().message;
    if (!index) return nullptr;
    b->index = std::move(index).value();
    b->syms = nm_symbols(out);
    slot = std::move(b);
    return slot.get();
  }

 private:
  static test::TempDir& dir() {
    static test::TempDir d;
    return d;
  }
  static std::map<std::string, std::unique_ptr<Built>>& cache() {
    static std::map<std::string, std::unique_ptr<Built>> c;
    return c;
  }
};

#define BUILD_OR_SKIP(var, ...)                              \
  Built* var = build(__VA_ARGS__);                           \
  if (!var) GTEST_SKIP() << "no compiler for " << GetParam(); \
  static_assert(true)

TEST_P(DwarfTypesTest, CTypesAreSpelledAsWritten) {
  BUILD_OR_SKIP(b, "types_c", kCSource, false, "-O2");
  auto* types = only(*b, "types");
  ASSERT_NE(types, nullptr);
  // Top-level qualifiers are not part of a parameter's type (`char* const cp`
  // is passed as a char*); arrays and functions decay to pointers.
  EXPECT_EQ(types->signature(),
            "int types(const char* s, volatile int* vp, char* cp, ulong_t u, struct point p, "
            "struct point* pp, union u uu, enum color c, int* arr, cb_t cb, int (*)(int, long) raw, "
            "struct holder* h, int (*)[3] pa, _Bool b, unsigned short us, long long ll, const void* cv, "
            "unsigned char uc, signed char sc)");
  EXPECT_EQ(only(*b, "vsum")->signature(), "int vsum(int n, ...)");
  EXPECT_TRUE(only(*b, "vsum")->variadic);
  EXPECT_EQ(only(*b, "nothing")->signature(), "void nothing()");
  EXPECT_EQ(only(*b, "get_sq")->return_type, "int (*)(int)");
}

TEST_P(DwarfTypesTest, UnnamedStructIsSpelledAnon) {
  BUILD_OR_SKIP(b, "types_c", kCSource, false, "-O2");
  // struct holder's member type, reached through the DIE of parameter `h`.
  auto* types = only(*b, "types");
  ASSERT_NE(types, nullptr);
  Dwarf_Die param, holder_ptr, holder, member, member_type;
  const DwarfParam* h = nullptr;
  for (auto& p : types->params)
    if (p.name == "h") h = &p;
  ASSERT_NE(h, nullptr);
  ASSERT_NE(dwarf_offdie(b->index.dwarf(), h->die_offset, &param), nullptr);
  ASSERT_TRUE(dwarf_ref_integrate(&param, DW_AT_type, &holder_ptr));
  ASSERT_TRUE(dwarf_ref_integrate(&holder_ptr, DW_AT_type, &holder));
  ASSERT_EQ(dwarf_child(&holder, &member), 0);
  ASSERT_TRUE(dwarf_ref_integrate(&member, DW_AT_type, &member_type));
  DwarfScopes no_scopes;
  EXPECT_EQ(dwarf_type_name(&member_type, no_scopes, {.c_tags = true}), "const struct <anon>*");
  EXPECT_EQ(dwarf_type_name(&member_type, no_scopes, {.c_tags = false}), "const struct <anon>*");
  EXPECT_EQ(dwarf_type_name(&holder, no_scopes, {.c_tags = false}), "holder");
  EXPECT_EQ(dwarf_type_name(nullptr, no_scopes, {}), "void");
}

TEST_P(DwarfTypesTest, OutOfLineCopyOfAnInlineFunctionIsNamedByItsOrigin) {
  BUILD_OR_SKIP(b, "types_c", kCSource, false, "-O2");
  auto* sq = only(*b, "sq");
  ASSERT_NE(sq, nullptr);
  EXPECT_EQ(sq->signature(), "int sq(int x)");
  EXPECT_EQ(sq->entry, nm_address(*b, "sq"));
  Dwarf_Die die;
  ASSERT_NE(dwarf_offdie(b->index.dwarf(), sq->die_offset, &die), nullptr);
  EXPECT_TRUE(dwarf_hasattr(&die, DW_AT_abstract_origin)) << "gcc changed how it describes the copy";
  EXPECT_FALSE(dwarf_hasattr(&die, DW_AT_name));
}

TEST_P(DwarfTypesTest, ColdPartIsASecondRangeAndNotAnEntry) {
  BUILD_OR_SKIP(b, "types_c", kCSource, false, "-O2");
  auto* f = only(*b, "with_cold");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->entry, nm_address(*b, "with_cold"));
  ASSERT_FALSE(f->ranges.empty());
  EXPECT_EQ(f->ranges.front(), std::make_pair(f->low, f->high));
  EXPECT_LE(f->low, f->entry);
  EXPECT_LT(f->entry, f->high);
  auto cold = b->syms.find("with_cold.cold");
  if (cold == b->syms.end()) {
    // gcc 12 splits it on x86-64; the aarch64 cross compiler may not.
    EXPECT_NE(GetParam(), "x86_64") << "expected gcc to move the unlikely path to with_cold.cold";
    return;
  }
  ASSERT_EQ(f->ranges.size(), 2u);
  EXPECT_EQ(f->ranges[1].first, cold->second);
  EXPECT_EQ(b->index.containing(cold->second), f);
  EXPECT_EQ(b->index.containing(f->ranges[1].second - 1), f);
  EXPECT_EQ(b->index.at_entry(cold->second), nullptr);
}

TEST_P(DwarfTypesTest, CppTypesAndScopes) {
  BUILD_OR_SKIP(b, "types_cpp", kCppSource, true, "-O2");
  auto* refs = only(*b, "refs");
  ASSERT_NE(refs, nullptr);
  EXPECT_EQ(refs->signature(),
            "int refs(int& r, const int& cr, int&& rr, const char* const* argv, ns::Klass& k, "
            "handler_t h, int (*)(int, ...) raw, int (ns::Klass::*)() const pmf, int ns::Klass::* pm, "
            "Mode m, U u, std::nullptr_t np, double (*)[4] arr, volatile long* vl)");
  EXPECT_EQ(only(*b, "ns::Klass::get")->signature(), "int ns::Klass::get(const ns::Klass* this)");
  EXPECT_EQ(only(*b, "ns::Klass::Inner::twice")->signature(),
            "int ns::Klass::Inner::twice(const ns::Klass::Inner* this)");
  auto* hidden = only(*b, "ns::(anonymous namespace)::hidden");
  ASSERT_NE(hidden, nullptr);
  EXPECT_EQ(hidden->entry, nm_address(*b, "_ZN2ns12_GLOBAL__N_16hiddenEi"));
}

TEST_P(DwarfTypesTest, InlineMethodKeptOutOfLineAtO0) {
  BUILD_OR_SKIP(b, "types_cpp_O0", kCppSource, true, "-O0");
  auto* inl = only(*b, "ns::Klass::inl");
  ASSERT_NE(inl, nullptr);
  EXPECT_EQ(inl->signature(), "int ns::Klass::inl(ns::Klass* this, int x)");
  EXPECT_EQ(inl->entry, nm_address(*b, "_ZN2ns5Klass3inlEi"));
}

TEST_P(DwarfTypesTest, AssemblyFunctionsHaveUnknownParameters) {
  BUILD_OR_SKIP(b, "asm", kAsmMain, false, "-O0", kAsmSource);
  auto* f = only(*b, "asm_fn");
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->params_known);
  EXPECT_EQ(f->signature(), "? asm_fn(?)");
  EXPECT_EQ(f->entry, nm_address(*b, "asm_fn"));
  EXPECT_TRUE(only(*b, "main")->params_known);
}

INSTANTIATE_TEST_SUITE_P(BothArches, DwarfTypesTest, ::testing::Values("x86_64", "arm64"),
                         [](auto& p) { return p.param; });

}  // namespace
}  // namespace uprof
