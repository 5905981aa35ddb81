// The argument string of a USDT (SystemTap SDT) probe, parsed into typed arguments.
//
// <sys/sdt.h> lets the compiler pick where each argument is at the probe's nop and
// writes the assembler's spelling of that operand into the note, after its size:
// "N@OPERAND", N the size in bytes, negative for a signed value. The arguments are
// separated by spaces. From `readelf -n /usr/bin/python3.11` (x86-64):
//
//   Arguments: 8@%r14 8@%rax -4@%ebp          (line: two pointers, a signed int)
//   Arguments: -4@112(%rsp)                   (gc__start: an int on the stack)
//
// and from the arm64 builds of tests/fixtures/usdt.c (-O2, then -O0):
//
//   Arguments: -1@x0 2@x1 -4@x2 -8@x3 8@x4    (an int8_t in x0: its low byte)
//   Arguments: -1@[sp, 31] 2@[sp, 28] -4@[sp, 24] -8@[sp, 16] 8@[sp, 8]
//
// The operand syntax is the architecture's assembler syntax (AT&T on x86-64), so
// parsing needs the architecture: the ELF file's, never the host's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/util/result.h"

namespace uprof {

// `4@$5`, arm64 `4@5`: the value itself.
struct UsdtConstant {
  int64_t value = 0;
};
// `8@%rbp`, `-4@%eax`, arm64 `-4@w1`: the (64-bit) register, by perf index. A
// narrower name is the low bytes of its register: %eax, %ax and %al are all rax.
struct UsdtRegister {
  uint8_t reg = 0;
};
// `-4@112(%rsp)`, `8@16(%rax,%rdx,8)`, arm64 `-4@[sp, 12]`: the bytes at
// base + index * scale + offset (no index: base + offset).
struct UsdtMemory {
  uint8_t base = 0;                  // perf index
  int64_t offset = 0;
  std::optional<uint8_t> index{};    // perf index, x86-64 only
  uint8_t scale = 1;                 // 1, 2, 4 or 8
};
// An operand the parser does not know (`8@%xmm1`, a float in a vector register):
// `why`, as parse_usdt_arg says it after the argument ("unknown register 'xmm1'
// (x86_64)"). Only read_usdt_args makes these.
struct UsdtUnparsed {
  std::string why{};
};
using UsdtLocation = std::variant<UsdtConstant, UsdtRegister, UsdtMemory, UsdtUnparsed>;

struct UsdtArg {
  uint8_t size = 0;         // 1, 2, 4 or 8 bytes
  bool is_signed = false;   // the N of "N@" was negative
  UsdtLocation location{};
  std::string text{};       // as the note spells it: "-4@112(%rsp)"
};

// One argument ("-4@112(%rsp)"). Errors name the argument:
//   "usdt: argument '8@%foo': unknown register 'foo' (x86_64)"
Result<UsdtArg> parse_usdt_arg(Arch arch, std::string_view text);

// The whole argument string, "" giving no arguments. A space inside brackets does
// not separate arguments: arm64's "-4@[sp, 12]" is one.
std::vector<std::string_view> split_usdt_args(std::string_view args);
Result<std::vector<UsdtArg>> parse_usdt_args(Arch arch, std::string_view args);

// The same, for recording: an argument that does not parse is kept, as UsdtUnparsed,
// so that one argument never costs the probe its others.
std::vector<UsdtArg> read_usdt_args(Arch arch, std::string_view args);

// Why uprof cannot read an argument at the probe, or nullopt when it can. Both engines
// read a register, or memory at a register + a 32-bit offset; not an address with an
// index register (gcc emits `8@32(%rsp,%rsi,8)` for `names[i % 2]`):
//   8@32(%rsp,%rsi,8) -> "an address with an index register, which uprof does not read"
std::optional<std::string> usdt_arg_unreadable(const UsdtArg& arg);

}  // namespace uprof
