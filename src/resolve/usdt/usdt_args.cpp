#include "uprof/resolve/usdt/usdt_args.h"

#include <array>
#include <charconv>

namespace uprof {
namespace {

// "-4@112(%rsp)" -> "usdt: argument '-4@112(%rsp)': WHAT"
template <class... Parts>
Error arg_error(std::string_view text, Parts&&... what) {
  return err("usdt: argument '", text, "': ", std::forward<Parts>(what)...);
}

void skip_spaces(std::string_view& s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
}

bool eat(std::string_view& s, char c) {
  if (s.empty() || s.front() != c) return false;
  s.remove_prefix(1);
  return true;
}

// A signed integer at the front of `s`, decimal or 0x hex: "112", "-8", "0x10".
// Consumes it; nullopt (and `s` untouched) when `s` does not start with one.
std::optional<int64_t> take_int(std::string_view& s) {
  std::string_view t = s;
  bool neg = eat(t, '-');
  if (!neg) eat(t, '+');
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    base = 16;
    t.remove_prefix(2);
  }
  uint64_t mag = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), mag, base);
  if (ec != std::errc() || end == t.data()) return std::nullopt;
  // -9223372036854775808 fits; anything beyond wraps as the assembler's 64-bit value would.
  int64_t v = static_cast<int64_t>(neg ? 0 - mag : mag);
  s.remove_prefix(static_cast<std::size_t>(end - s.data()));
  return v;
}

// A register name at the front of `s` (letters and digits), consumed.
std::string_view take_name(std::string_view& s) {
  std::size_t n = 0;
  while (n < s.size() && ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9'))) n++;
  auto name = s.substr(0, n);
  s.remove_prefix(n);
  return name;
}

// A register operand by its name at the operand's size (arch.h's register parts):
// x86-64 "rbp", "eax", "r12d" (`sigil` "%", as errors print it), arm64 "x0", "w1",
// "sp", "fp" -> perf index.
Result<uint8_t> operand_reg(const ArchInfo& a, std::string_view text, std::string_view name,
                            std::string_view sigil) {
  FoundPart part = find_reg_by_part(a, name);
  // %ah..%dh are bits 8-15 of their register: no perf register holds them as the
  // low bytes a size-1 read takes, so they would read the wrong byte.
  if (part.reg && part.byte_offset)
    return arg_error(text, "high-byte register '", sigil, name, "' is not supported");
  // The segment registers and flags (x86-64) and pc (arm64) are in the table for
  // samples, never an operand.
  if (!part.reg || !part.reg->operand)
    return arg_error(text, "unknown register '", sigil, name, "' (", a.name, ")");
  return part.reg->perf_index;
}

// "%rbp" at the front of `s`, consumed.
Result<uint8_t> take_x86_reg(const ArchInfo& a, std::string_view text, std::string_view& s) {
  if (!eat(s, '%')) return arg_error(text, "expected a register at '", s, "'");
  auto name = take_name(s);
  if (name.empty()) return arg_error(text, "expected a register name after '%'");
  return operand_reg(a, text, name, "%");
}

Result<UsdtLocation> parse_x86_operand(const ArchInfo& a, std::string_view text, std::string_view s) {
  // 4@$5, -4@$-1: an immediate.
  if (eat(s, '$')) {
    auto v = take_int(s);
    if (!v || !s.empty()) return arg_error(text, "unknown form: the constant is not an integer");
    return UsdtLocation{UsdtConstant{*v}};
  }
  // 8@%rbp, -4@%eax: a register.
  if (s.starts_with('%')) {
    UPROF_ASSIGN(uint8_t reg, take_x86_reg(a, text, s));
    if (!s.empty()) return arg_error(text, "unknown form: '", s, "' after the register");
    return UsdtLocation{UsdtRegister{reg}};
  }
  // Memory: -4@112(%rsp), 8@-8(%rbp), 8@(%rax), 8@(%rax,%rdx,8), 8@16(%rax,%rdx,8).
  // The displacement is a number; a symbol (8@counter(%rip)) is not supported yet.
  UsdtMemory m;
  if (!s.starts_with('(')) {
    auto off = take_int(s);
    if (!off || !s.starts_with('(')) return arg_error(text, "unknown form");
    m.offset = *off;
  }
  eat(s, '(');
  skip_spaces(s);
  // 8@(,%rdx,8): no base register, an absolute address; gcc only emits it for
  // non-PIC code's arrays, and it needs a symbol's address to mean anything.
  if (s.starts_with(',')) return arg_error(text, "unknown form: an index without a base register");
  UPROF_ASSIGN(m.base, take_x86_reg(a, text, s));
  skip_spaces(s);
  if (eat(s, ',')) {
    skip_spaces(s);
    UPROF_ASSIGN(uint8_t index, take_x86_reg(a, text, s));
    m.index = index;
    skip_spaces(s);
    // (%rax,%rdx) has scale 1; (%rax,%rdx,8) scale 8.
    if (eat(s, ',')) {
      skip_spaces(s);
      auto scale = take_int(s);
      if (!scale || (*scale != 1 && *scale != 2 && *scale != 4 && *scale != 8))
        return arg_error(text, "the scale must be 1, 2, 4 or 8");
      m.scale = static_cast<uint8_t>(*scale);
      skip_spaces(s);
    }
  }
  if (!eat(s, ')') || !s.empty()) return arg_error(text, "unknown form: expected ')' at the end");
  return UsdtLocation{m};
}

// arm64 operands name "x0".."x30", "w0".."w30" (the low half of x0..x30), "sp"
// (and "wsp"), "fp"/"lr" as arch.h spells x29/x30.
Result<UsdtLocation> parse_arm64_operand(const ArchInfo& a, std::string_view text, std::string_view s) {
  // 4@5, -4@-1: an immediate (the assembler's "#5" is printed without its '#';
  // accept it anyway).
  eat(s, '#');
  if (!s.empty() && (s.front() == '-' || s.front() == '+' || (s.front() >= '0' && s.front() <= '9'))) {
    auto v = take_int(s);
    if (!v || !s.empty()) return arg_error(text, "unknown form: the constant is not an integer");
    return UsdtLocation{UsdtConstant{*v}};
  }
  // Memory: 8@[x1], -4@[sp, 12], 8@[x1,-8], 8@[x29, #-8].
  if (eat(s, '[')) {
    skip_spaces(s);
    UsdtMemory m;
    UPROF_ASSIGN(m.base, operand_reg(a, text, take_name(s), ""));
    skip_spaces(s);
    if (eat(s, ',')) {
      skip_spaces(s);
      eat(s, '#');
      auto off = take_int(s);
      // [x1, x2] (a register index) is valid assembler, but sdt.h's "o" operands
      // never produce it.
      if (!off) return arg_error(text, "unknown form: the offset is not an integer");
      m.offset = *off;
      skip_spaces(s);
    }
    if (!eat(s, ']') || !s.empty()) return arg_error(text, "unknown form: expected ']' at the end");
    return UsdtLocation{m};
  }
  // 8@x0, -4@w1, 8@sp: a register.
  auto name = take_name(s);
  if (name.empty() || !s.empty()) return arg_error(text, "unknown form");
  UPROF_ASSIGN(uint8_t reg, operand_reg(a, text, name, ""));
  return UsdtLocation{UsdtRegister{reg}};
}

// The two assemblers' operand syntaxes (AT&T `-4@8(%rbp)`, A64 `-4@[sp, 8]`) are
// different grammars: each has its parser.
using OperandParser = Result<UsdtLocation> (*)(const ArchInfo&, std::string_view, std::string_view);
constexpr PerArch<OperandParser> kOperandParsers{.x86_64 = parse_x86_operand, .arm64 = parse_arm64_operand};

}  // namespace

Result<UsdtArg> parse_usdt_arg(Arch arch, std::string_view text) {
  // "-4@%eax": the size (negative: signed), '@', the operand.
  std::string_view s = text;
  auto size = take_int(s);
  if (!size || !eat(s, '@')) return arg_error(text, "unknown form: expected SIZE@OPERAND");
  int64_t bytes = *size < 0 ? -*size : *size;
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
    return arg_error(text, "size ", *size, " is not 1, 2, 4 or 8 bytes (negative for signed)");
  UsdtArg a;
  a.size = static_cast<uint8_t>(bytes);
  a.is_signed = *size < 0;
  a.text = std::string(text);
  if (s.empty()) return arg_error(text, "no operand after '@'");
  auto loc = kOperandParsers[arch](arch_info(arch), text, s);
  if (!loc) return std::move(loc).take_error();
  a.location = *loc;
  return a;
}

std::vector<std::string_view> split_usdt_args(std::string_view args) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < args.size()) {
    while (i < args.size() && (args[i] == ' ' || args[i] == '\t')) i++;
    if (i == args.size()) break;
    std::size_t start = i;
    int depth = 0;
    for (; i < args.size(); i++) {
      char c = args[i];
      if (c == '[' || c == '(') depth++;
      else if ((c == ']' || c == ')') && depth > 0) depth--;
      else if ((c == ' ' || c == '\t') && depth == 0) break;
    }
    out.push_back(args.substr(start, i - start));
  }
  return out;
}

Result<std::vector<UsdtArg>> parse_usdt_args(Arch arch, std::string_view args) {
  std::vector<UsdtArg> out;
  for (auto one : split_usdt_args(args)) {
    UPROF_ASSIGN(UsdtArg a, parse_usdt_arg(arch, one));
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<UsdtArg> read_usdt_args(Arch arch, std::string_view args) {
  std::vector<UsdtArg> out;
  for (auto one : split_usdt_args(args)) {
    auto a = parse_usdt_arg(arch, one);
    if (a) {
      out.push_back(std::move(*a));
      continue;
    }
    // The reason without arg_error's "usdt: argument '-8@%xmm1': ", which the note says.
    std::string why = a.error().message;
    const std::string head = "usdt: argument '" + std::string(one) + "': ";
    if (why.rfind(head, 0) == 0) why.erase(0, head.size());
    UsdtArg kept{.size = 8, .is_signed = false, .location = UsdtUnparsed{why}, .text = std::string(one)};
    out.push_back(std::move(kept));
  }
  return out;
}

std::optional<std::string> usdt_arg_unreadable(const UsdtArg& arg) {
  if (const auto* u = std::get_if<UsdtUnparsed>(&arg.location)) return u->why;
  if (const auto* m = std::get_if<UsdtMemory>(&arg.location)) {
    if (m->index) return "an address with an index register, which uprof does not read";
    if (m->offset < INT32_MIN || m->offset > INT32_MAX) return "an offset beyond 32 bits";
  }
  return std::nullopt;
}

}  // namespace uprof
