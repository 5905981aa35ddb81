// What the user asks to probe, parsed from one -e argument. Grammar:
//
//   SPEC     := LOCATION [VALUE ...]             values are separated by spaces
//   LOCATION := [OBJECT ':'] WHAT ['%return']
//   OBJECT   := a path (has '/') | a file in the current directory | a library short
//               name ("libc", "libfx.so.1", "libstdc++"), looked up as the loader would
//   WHAT     := FUNC ['@' ['@'] VERSION] ['+' OFFSET]     add, memcpy@@GLIBC_2.14, add+0x8
//             | '"' ANY '"' ['@' ...] ['+' OFFSET]         "operator new(unsigned long)"
//             | OFFSET                                     0x1139: a raw file offset
//   FUNC     := a symbol name, a C++ name ("ns::Klass::method", "ns::f(int)"), or a glob
//               ("sql*", "operator delete*": '*' and '?', on symbols and demangled names)
//   LOCATION := 'usdt:' [OBJECT ':'] PROVIDER ':' NAME    a USDT (SystemTap SDT) probe; globs
//               in PROVIDER and NAME ("usdt:python:function__*"); no %return, no +OFF
//   LOCATION := [OBJECT ':'] SOURCE ':' LINE     every statement of a source line, as perf
//               probe and gdb name it: "workload.c:42", "fixtures/workload.c:42" (a path
//               suffix), "./prog:workload.c:42"; SOURCE has a source extension (.c .h .cc
//               .cpp ...); LINE is decimal
//             | [OBJECT ':'] FUNC ':' LINE       perf probe's FUNC:RLN: LINE lines below the
//               line FUNC is declared on ("loop_sum:3"); no %return, no +OFF
//
// A trailing ':' + decimal number is a line, not a file offset: "add:3" is add's third
// line; a decimal file offset needs a path before it ("./prog:4409") or hex ("prog:0x1139").
//
// Where the location ends. Values are separated by spaces, and C++ names hold spaces as
// the demangler prints them; a space ends the location only when it is outside
// (), <>, [] and "quotes", and none of these continues the name:
//   - the word `operator` before it: "operator new(unsigned long)", "operator delete*",
//     "Vec::operator bool()"; the characters of an operator are its name, not brackets:
//     "operator<", "operator()(int)", "operator->"
//   - a word after it that no value can be, a C++ keyword of a type or a qualifier, or
//     a clone mark: "f() const", "operator unsigned long()", "f(int) [clone .isra.0]"
// So "add %di $retval", "ns::f(int, long) %di", "operator new(unsigned long) $arg1" and
// "ns::V::get() const $retval" all split where a perf or bpftrace user expects. Anything
// else goes in double quotes (bpftrace's way): 'libstdc++:"operator new[](unsigned long)" $arg1'.
//
// Globs and exact names: a FUNC with '*' or '?' is first looked up as a name, then as a
// glob. "operator*" is a glob (every operator) unless a function is named exactly that;
// "Vec::operator*" and "f(char*)" are names when the file has them.
//
// The OBJECT separator is the first ':' that is not half of a C++ "::" and not inside
// brackets ("f[abi:cxx11]()") or quotes.
// Examples: "add", "./mytest:add%return", "libc:malloc", "mytest:0x1139", "add+0x10",
//           "'ns::Klass::method(int)'", "add %di %si".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "uprof/spec/value_request.h"
#include "uprof/util/result.h"

namespace uprof {

struct FunctionRef {
  std::string name;                  // symbol, C++ name, or glob pattern
  std::optional<std::string> version;
  bool default_version_only = false; // "@@VER" rather than "@VER"
  std::optional<uint64_t> offset;    // "+OFF" into the function
  bool is_glob = false;              // holds '*' or '?': a glob unless a function has that name
};

struct RawOffset {
  uint64_t offset = 0;               // a file offset, as tracefs takes it
};

// "usdt:python:function__entry": the probe(s) of that provider and name, in the
// program and the libraries it loads, or in OBJECT alone when the spec names one.
struct UsdtRef {
  std::string provider;
  std::string name;
  bool is_glob = false;              // either part holds '*', '?' or '['
};

// "workload.c:42", "fixtures/workload.c:42": the addresses the DWARF line table marks
// as a statement start of that line, inlined copies included.
struct SourceLine {
  std::string file;                  // a file name or a path suffix, as written
  uint32_t line = 0;
};

// "loop_sum:3": line 3 counted from the line FUNC's name is declared on (line 0), as
// perf probe's FUNC:RLN counts; only the addresses inside FUNC.
struct FunctionLine {
  std::string function;
  uint32_t line = 0;
};

// True for a name with a source file's extension: "workload.c", "a/b.hpp".
bool is_source_file_name(std::string_view name);

struct ProbeSpec {
  std::string text;                  // as the user wrote it, for messages
  std::string object;                // "" means the target program
  std::variant<FunctionRef, RawOffset, UsdtRef, SourceLine, FunctionLine> what;
  bool is_return = false;
  std::vector<ValueRequest> values;  // "%di", "$retval", "a": each parsed once, here
};

Result<ProbeSpec> parse_probe_spec(std::string_view text);

// "add(a, b)" -> {"add", {"a", "b"}}: a function and the parameters to capture,
// by name. nullopt unless the text ends in a parenthesised list of identifiers
// (possibly empty). "ns::f(int)" parses too: the resolver tries it as a C++
// parameter list first, and only when no function has that signature as names.
struct CallArgs {
  std::string function;
  std::vector<std::string> names;
};
std::optional<CallArgs> parse_call_args(std::string_view name);

// Questions the resolver asks of a spec, answered from its syntax alone.
//
// A function named plainly: no glob, +OFF, @VERSION or %return ("sq"; not "s*", "sq+0x4",
// "sq@V1" or "sq%return"). Its inlined copies, which have none of these, are probed with it.
bool names_plain_function(const ProbeSpec& spec);
// A glob of functions or USDT probes ("libc:pthread_spin_*", "usdt:python:function__*"):
// a spec that may stand for many probes, some of which a recording can do without.
bool is_glob(const ProbeSpec& spec);
// The spec names a `.cold` fragment itself ("inner.cold"): only then is one probed, as it
// is entered by a jump from its function, never called.
bool names_cold_part(const FunctionRef& ref);
// The values a call's parameter list asks for: "add(a, b)" -> a, b (by name);
// "add()" -> $retval alone.
std::vector<ValueRequest> call_values(const CallArgs& call);
// The name and version as written: "memcpy@@GLIBC_2.14", "memcpy@GLIBC_2.2.5", "add".
std::string name_with_version(const FunctionRef& ref);
// A line as written, the name of its sites: "lines.c:24", "loop_sum:3".
std::string line_text(const SourceLine& line);
std::string line_text(const FunctionLine& line);

// Parses "0x1f", "31", "0X1F"; nullopt on anything else or on overflow.
std::optional<uint64_t> parse_number(std::string_view s);

}  // namespace uprof
