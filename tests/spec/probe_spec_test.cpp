#include "uprof/spec/probe_spec.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

const FunctionRef& fn(const ProbeSpec& s) { return std::get<FunctionRef>(s.what); }

TEST(ProbeSpec, PlainFunction) {
  auto s = parse_probe_spec("add");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->object, "");
  EXPECT_EQ(fn(*s).name, "add");
  EXPECT_FALSE(fn(*s).offset);
  EXPECT_FALSE(s->is_return);
  EXPECT_FALSE(fn(*s).is_glob);
}

TEST(ProbeSpec, ObjectAndReturn) {
  auto s = parse_probe_spec("./mytest:add%return");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->object, "./mytest");
  EXPECT_EQ(fn(*s).name, "add");
  EXPECT_TRUE(s->is_return);
}

TEST(ProbeSpec, LibraryShortName) {
  auto s = parse_probe_spec("libc:malloc");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->object, "libc");
  EXPECT_EQ(fn(*s).name, "malloc");
}

TEST(ProbeSpec, FunctionPlusOffset) {
  auto s = parse_probe_spec("loop_sum+0x1c");
  ASSERT_TRUE(s);
  EXPECT_EQ(fn(*s).name, "loop_sum");
  EXPECT_EQ(fn(*s).offset, 0x1cu);
  auto d = parse_probe_spec("loop_sum+12");
  ASSERT_TRUE(d);
  EXPECT_EQ(fn(*d).offset, 12u);
}

TEST(ProbeSpec, RawOffset) {
  auto s = parse_probe_spec("./mytest:0x1139");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->object, "./mytest");
  EXPECT_EQ(std::get<RawOffset>(s->what).offset, 0x1139u);
}

TEST(ProbeSpec, VersionedName) {
  auto s = parse_probe_spec("libc:memcpy@@GLIBC_2.14");
  ASSERT_TRUE(s);
  EXPECT_EQ(fn(*s).name, "memcpy");
  EXPECT_EQ(fn(*s).version, "GLIBC_2.14");
  EXPECT_TRUE(fn(*s).default_version_only);
  auto h = parse_probe_spec("memcpy@GLIBC_2.2.5");
  ASSERT_TRUE(h);
  EXPECT_EQ(fn(*h).version, "GLIBC_2.2.5");
  EXPECT_FALSE(fn(*h).default_version_only);
}

TEST(ProbeSpec, CxxNamesKeepTheirColons) {
  auto s = parse_probe_spec("ns::Klass::method");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->object, "");
  EXPECT_EQ(fn(*s).name, "ns::Klass::method");
  auto t = parse_probe_spec("./cpp_O2:ns::Klass::method(int)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->object, "./cpp_O2");
  EXPECT_EQ(fn(*t).name, "ns::Klass::method(int)");
  auto u = parse_probe_spec("ns::Klass::method(int, double)%return");
  ASSERT_TRUE(u);
  EXPECT_EQ(fn(*u).name, "ns::Klass::method(int, double)");
  EXPECT_TRUE(u->is_return);
  auto op = parse_probe_spec("ns::V::operator+");
  ASSERT_TRUE(op);
  EXPECT_EQ(fn(*op).name, "ns::V::operator+");
  EXPECT_FALSE(fn(*op).offset);
}

// C++ names hold spaces where the demangler prints them; values follow after a space
// that ends the name (probe_spec.h: "Where the location ends").
TEST(ProbeSpec, CxxNamesWithSpacesAndOperators) {
  struct Case {
    const char* text;
    const char* object;
    const char* name;
    std::vector<std::string> values;
  };
  const Case cases[] = {
      {"libstdc++:operator new(unsigned long)", "libstdc++", "operator new(unsigned long)", {}},
      {"operator new(unsigned long) $arg1", "", "operator new(unsigned long)", {"$arg1"}},
      {"operator delete*", "", "operator delete*", {}},
      {"operator delete* %di", "", "operator delete*", {"%di"}},
      {"operator new[](unsigned long)", "", "operator new[](unsigned long)", {}},
      {"std::vector<int>::push_back(int const&) %si", "", "std::vector<int>::push_back(int const&)", {"%si"}},
      {"std::vector<int, std::allocator<int> >::size() const", "", "std::vector<int, std::allocator<int> >::size() const", {}},
      {"ns::V::get() const $retval", "", "ns::V::get() const", {"$retval"}},
      {"ns::V::operator<(ns::V const&) const %di", "", "ns::V::operator<(ns::V const&) const", {"%di"}},
      {"ns::V::operator< %di", "", "ns::V::operator<", {"%di"}},
      {"ns::V::operator<<(int) %si", "", "ns::V::operator<<(int)", {"%si"}},
      {"ns::V::operator->", "", "ns::V::operator->", {}},
      {"std::less<int>::operator()(int const&, int const&) const", "", "std::less<int>::operator()(int const&, int const&) const", {}},
      {"ns::V::operator unsigned long() const x", "", "ns::V::operator unsigned long() const", {"x"}},
      {"ns::V::operator bool() %di", "", "ns::V::operator bool()", {"%di"}},
      {"ns::Klass::method(double) [clone .isra.0] $arg1", "", "ns::Klass::method(double) [clone .isra.0]", {"$arg1"}},
      {"libstdc++:std::locale::name[abi:cxx11]() const", "libstdc++", "std::locale::name[abi:cxx11]() const", {}},
      {"f[abi:cxx11]()", "", "f[abi:cxx11]()", {}},
      {"ns::V::operator%", "", "ns::V::operator%", {}},
      {"libstdc++:\"operator new[](unsigned long)\" $arg1", "libstdc++", "operator new[](unsigned long)", {"$arg1"}},
      {"\"operator\" %di", "", "operator", {"%di"}},
      // A word that is not a C++ keyword ends the name: here a parameter to capture.
      {"add a b", "", "add", {"a", "b"}},
  };
  for (const Case& c : cases) {
    auto s = parse_probe_spec(c.text);
    ASSERT_TRUE(s) << c.text << ": " << s.error().message;
    EXPECT_EQ(s->object, c.object) << c.text;
    EXPECT_EQ(fn(*s).name, c.name) << c.text;
    std::vector<std::string> values;
    for (const auto& v : s->values) values.push_back(v.text);
    EXPECT_EQ(values, c.values) << c.text;
    EXPECT_FALSE(s->is_return) << c.text;
    EXPECT_FALSE(fn(*s).offset) << c.text;
  }
}

TEST(ProbeSpec, SuffixesAfterOperatorsAndQuotes) {
  auto r = parse_probe_spec("operator delete*%return");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(fn(*r).name, "operator delete*");
  EXPECT_TRUE(r->is_return);
  auto star = parse_probe_spec("Vec::operator*%return $retval");
  ASSERT_TRUE(star) << star.error().message;
  EXPECT_EQ(fn(*star).name, "Vec::operator*");
  EXPECT_TRUE(star->is_return);
  auto q = parse_probe_spec("libstdc++:\"operator new(unsigned long)\"@@GLIBCXX_3.4+0x4");
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ(fn(*q).name, "operator new(unsigned long)");
  EXPECT_EQ(fn(*q).version, "GLIBCXX_3.4");
  EXPECT_EQ(fn(*q).offset, 4u);
  auto qr = parse_probe_spec("\"operator new(unsigned long)\"%return $retval");
  ASSERT_TRUE(qr) << qr.error().message;
  EXPECT_TRUE(qr->is_return);
  EXPECT_EQ(qr->values.at(0).text, "$retval");
  EXPECT_EQ(parse_probe_spec("\"operator new").error().message, "spec: '\"operator new': unterminated quote (at column 1)");
  EXPECT_EQ(parse_probe_spec("\"\"").error().message, "spec: '\"\"': empty quoted name (at column 1)");
  EXPECT_EQ(parse_probe_spec("\"f\"x").error().message,
            "spec: '\"f\"x': after a quoted name only @VERSION and +OFFSET may follow (at column 4)");
  // An operator's characters are its name: "operator%ret" is one (quote it to mean otherwise).
  EXPECT_EQ(fn(*parse_probe_spec("operator%ret")).name, "operator%ret");
  EXPECT_EQ(fn(*parse_probe_spec("\"a b\":f")).name, "f");
  EXPECT_EQ(parse_probe_spec("\"a b\":f")->object, "a b");
}

// '*' and '?' make a glob (on symbols and demangled names); whether a name with them
// is a glob or names one function is the resolver's call: an exact name wins.
TEST(ProbeSpec, GlobMarks) {
  EXPECT_TRUE(fn(*parse_probe_spec("operator*")).is_glob);
  EXPECT_TRUE(fn(*parse_probe_spec("operator delete*")).is_glob);
  EXPECT_TRUE(fn(*parse_probe_spec("ns::Klass::meth?d")).is_glob);
  EXPECT_FALSE(fn(*parse_probe_spec("operator[]")).is_glob);
  EXPECT_FALSE(fn(*parse_probe_spec("f[abi:cxx11]()")).is_glob);
}

TEST(ProbeSpec, Glob) {
  auto s = parse_probe_spec("sql*");
  ASSERT_TRUE(s);
  EXPECT_TRUE(fn(*s).is_glob);
  EXPECT_TRUE(fn(*parse_probe_spec("add?")).is_glob);
}

TEST(ProbeSpec, Usdt) {
  auto s = parse_probe_spec("usdt:python:function__entry $arg2:string");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->object, "");
  const auto& u = std::get<UsdtRef>(s->what);
  EXPECT_EQ(u.provider, "python");
  EXPECT_EQ(u.name, "function__entry");
  EXPECT_FALSE(u.is_glob);
  ASSERT_EQ(s->values.size(), 1u);
  EXPECT_EQ(s->values[0].text, "$arg2:string");
  // The file is what comes before the last two fields, colons and all.
  auto b = parse_probe_spec("usdt:/usr/lib/x86_64-linux-gnu/libstdc++.so.6:libstdcxx:throw");
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->object, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6");
  EXPECT_EQ(std::get<UsdtRef>(b->what).provider, "libstdcxx");
  EXPECT_EQ(std::get<UsdtRef>(b->what).name, "throw");
  EXPECT_TRUE(std::get<UsdtRef>(parse_probe_spec("usdt:python:gc__*")->what).is_glob);
  EXPECT_EQ(parse_probe_spec("usdt:python").error().message,
            "spec: 'usdt:python': a USDT spec is usdt:PROVIDER:NAME or usdt:BIN:PROVIDER:NAME (at column 1)");
  EXPECT_EQ(parse_probe_spec("usdt::tick").error().message, "spec: 'usdt::tick': a USDT spec is usdt:PROVIDER:NAME or usdt:BIN:PROVIDER:NAME (at column 1)");
  EXPECT_EQ(parse_probe_spec("usdt:python:function__entry%return").error().message,
            "spec: 'usdt:python:function__entry%return': a USDT probe has no return: pair its entry and return "
            "probes instead (at column 1)");
}

TEST(ProbeSpec, Values) {
  auto s = parse_probe_spec("add %di   %si");
  ASSERT_TRUE(s);
  ASSERT_EQ(s->values.size(), 2u);
  EXPECT_EQ(s->values[0].text, "%di");
  EXPECT_EQ(s->values[1].text, "%si");
  auto r = parse_probe_spec("add%return $retval");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->is_return);
  EXPECT_EQ(r->values.at(0).text, "$retval");
}

TEST(ProbeSpec, ErrorsPointAtTheCharacter) {
  auto bad_off = parse_probe_spec("add+0xZZ");
  ASSERT_FALSE(bad_off);
  EXPECT_EQ(bad_off.error().message, "spec: 'add+0xZZ': bad offset '0xZZ' (at column 5)");
  auto bad_raw = parse_probe_spec("bin:0x12g");
  ASSERT_FALSE(bad_raw);
  EXPECT_EQ(bad_raw.error().message, "spec: 'bin:0x12g': bad offset '0x12g' (at column 5)");
  auto suffix = parse_probe_spec("add%ret");
  ASSERT_FALSE(suffix);
  EXPECT_EQ(suffix.error().message, "spec: 'add%ret': unknown suffix '%ret' (only %return is known) (at column 4)");
  EXPECT_EQ(parse_probe_spec("  ").error().message, "spec: empty probe spec");
  EXPECT_EQ(parse_probe_spec(":add").error().message, "spec: ':add': empty object name before ':' (at column 1)");
  EXPECT_EQ(parse_probe_spec("bin:").error().message, "spec: 'bin:': no function or offset to probe (at column 5)");
  // A raw offset's return: the user vouches that it is a function entry (stripped binaries).
  auto raw_ret = parse_probe_spec("bin:0x10%return");
  ASSERT_TRUE(raw_ret) << raw_ret.error().message;
  EXPECT_TRUE(raw_ret->is_return);
  EXPECT_EQ(std::get<RawOffset>(raw_ret->what).offset, 0x10u);
  EXPECT_EQ(parse_probe_spec("add+4%return").error().message,
            "spec: 'add+4%return': a return probe goes on the function entry, not +OFF (at column 4)");
  EXPECT_FALSE(parse_probe_spec("memcpy@"));
}

TEST(ProbeSpec, NumberParsing) {
  EXPECT_EQ(parse_number("0x10"), 16u);
  EXPECT_EQ(parse_number("0XfF"), 255u);
  EXPECT_EQ(parse_number("42"), 42u);
  EXPECT_FALSE(parse_number("0x"));
  EXPECT_FALSE(parse_number("12a"));
  EXPECT_FALSE(parse_number("0x1ffffffffffffffff"));
  EXPECT_EQ(parse_number("0xffffffffffffffff"), UINT64_MAX);
}

}  // namespace
}  // namespace uprof

namespace uprof {
namespace {

// "add(a, b)": a function and the parameters to capture by name; a C++
// parameter list of types is left to the resolver, which tries it first.
TEST(CallArgs, NamesInParentheses) {
  auto c = parse_call_args("add(a, b)");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->function, "add");
  EXPECT_EQ(c->names, (std::vector<std::string>{"a", "b"}));
  auto none = parse_call_args("add()");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->names.empty());
  EXPECT_EQ(parse_call_args("ns::f(x)")->function, "ns::f");
  EXPECT_FALSE(parse_call_args("add"));
  EXPECT_FALSE(parse_call_args("f(char*)"));
  EXPECT_FALSE(parse_call_args("f(unsigned int)"));
  EXPECT_FALSE(parse_call_args("f(std::string)"));
  EXPECT_FALSE(parse_call_args("f(1)"));
  EXPECT_FALSE(parse_call_args("(a)"));
}

}  // namespace
}  // namespace uprof

namespace uprof {
namespace {

TEST(ProbeSpec, SourceLinesByFileNameOrPathSuffix) {
  auto s = parse_probe_spec("workload.c:42");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->object, "");
  EXPECT_EQ(std::get<SourceLine>(s->what).file, "workload.c");
  EXPECT_EQ(std::get<SourceLine>(s->what).line, 42u);
  auto suffix = parse_probe_spec("fixtures/workload.c:42 $vars");
  ASSERT_TRUE(suffix) << suffix.error().message;
  EXPECT_EQ(std::get<SourceLine>(suffix->what).file, "fixtures/workload.c");
  ASSERT_EQ(suffix->values.size(), 1u);
  // BIN:SOURCE:LINE
  auto in_bin = parse_probe_spec("./prog:lib/util.hpp:7 i");
  ASSERT_TRUE(in_bin) << in_bin.error().message;
  EXPECT_EQ(in_bin->object, "./prog");
  EXPECT_EQ(std::get<SourceLine>(in_bin->what).file, "lib/util.hpp");
  EXPECT_EQ(std::get<SourceLine>(in_bin->what).line, 7u);
  EXPECT_EQ(in_bin->values.at(0).text, "i");
}

TEST(ProbeSpec, FunctionLinesCountFromTheDeclaration) {
  auto s = parse_probe_spec("loop_sum:3");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(std::get<FunctionLine>(s->what).function, "loop_sum");
  EXPECT_EQ(std::get<FunctionLine>(s->what).line, 3u);
  auto zero = parse_probe_spec("libfx:fx_mix:0");
  ASSERT_TRUE(zero) << zero.error().message;
  EXPECT_EQ(zero->object, "libfx");
  EXPECT_EQ(std::get<FunctionLine>(zero->what).function, "fx_mix");
  EXPECT_EQ(std::get<FunctionLine>(zero->what).line, 0u);
  auto cxx = parse_probe_spec("ns::Klass::method:2");
  ASSERT_TRUE(cxx) << cxx.error().message;
  EXPECT_EQ(cxx->object, "");
  EXPECT_EQ(std::get<FunctionLine>(cxx->what).function, "ns::Klass::method");
}

TEST(ProbeSpec, OffsetsStayOffsets) {
  // hex after BIN, or a decimal after a path: file offsets, as before.
  EXPECT_EQ(std::get<RawOffset>(parse_probe_spec("mytest:0x1139")->what).offset, 0x1139u);
  auto path = parse_probe_spec("./mytest:4409");
  ASSERT_TRUE(path);
  EXPECT_EQ(path->object, "./mytest");
  EXPECT_EQ(std::get<RawOffset>(path->what).offset, 4409u);
  EXPECT_EQ(std::get<FunctionRef>(parse_probe_spec("add+16")->what).offset, 16u);
  EXPECT_EQ(std::get<FunctionRef>(parse_probe_spec("ns::f")->what).name, "ns::f");
}

TEST(ProbeSpec, LineErrors) {
  EXPECT_EQ(parse_probe_spec("fx.c:12%return").error().message,
            "spec: 'fx.c:12%return': a source line has no return: probe the function for its returns (at column 5)");
  EXPECT_EQ(parse_probe_spec("fx.c:0").error().message, "spec: 'fx.c:0': line numbers start at 1 (at column 6)");
}

TEST(ProbeSpec, SourceFileNames) {
  for (const char* f : {"a.c", "x/y.cc", "k.cpp", "h.h", "w.hpp", "s.S"}) EXPECT_TRUE(is_source_file_name(f)) << f;
  for (const char* f : {"libc", "./prog", "libfx.so.1", "add", ".c", "dir/.c", "prog.o"})
    EXPECT_FALSE(is_source_file_name(f)) << f;
}

}  // namespace
}  // namespace uprof

namespace uprof {
namespace {

// The questions the resolver asks of a spec, from its syntax alone.
TEST(SpecQuestions, APlainFunctionHasNoGlobOffsetVersionOrReturn) {
  auto plain = [](const char* text) {
    auto s = parse_probe_spec(text);
    EXPECT_TRUE(s) << text;
    return s && names_plain_function(*s);
  };
  EXPECT_TRUE(plain("sq"));
  EXPECT_TRUE(plain("./prog:ns::f(int) %di"));
  EXPECT_TRUE(plain("add(a, b)"));
  EXPECT_FALSE(plain("s*"));
  EXPECT_FALSE(plain("sq+0x4"));
  EXPECT_FALSE(plain("sq@V1"));
  EXPECT_FALSE(plain("sq%return"));
  EXPECT_FALSE(plain("prog:0x1139"));
  EXPECT_FALSE(plain("lines.c:24"));
  EXPECT_FALSE(plain("usdt:python:gc__start"));
}

TEST(SpecQuestions, ColdPartsCallValuesVersionsAndLines) {
  EXPECT_TRUE(names_cold_part(fn(*parse_probe_spec("inner.cold"))));
  EXPECT_FALSE(names_cold_part(fn(*parse_probe_spec("inner"))));

  const auto two = call_values(*parse_call_args("add(a, b)"));
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].text, "a");
  EXPECT_EQ(std::get<ParamRef>(two[1].target).name, "b");
  const auto ret = call_values(*parse_call_args("add()"));
  ASSERT_EQ(ret.size(), 1u);
  EXPECT_EQ(ret[0].text, "$retval");
  EXPECT_TRUE(std::holds_alternative<ReturnValueRef>(ret[0].target));

  EXPECT_EQ(name_with_version(fn(*parse_probe_spec("memcpy@@GLIBC_2.14"))), "memcpy@@GLIBC_2.14");
  EXPECT_EQ(name_with_version(fn(*parse_probe_spec("memcpy@GLIBC_2.2.5"))), "memcpy@GLIBC_2.2.5");
  EXPECT_EQ(name_with_version(fn(*parse_probe_spec("add+0x4"))), "add");

  EXPECT_EQ(line_text(std::get<SourceLine>(parse_probe_spec("./prog:lines.c:24")->what)), "lines.c:24");
  EXPECT_EQ(line_text(std::get<FunctionLine>(parse_probe_spec("loop_sum:3")->what)), "loop_sum:3");
}

}  // namespace
}  // namespace uprof
