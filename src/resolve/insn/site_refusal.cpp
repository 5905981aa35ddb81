#include "uprof/resolve/insn/site_refusal.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>

#include "uprof/resolve/insn/insn_decode.h"
#include "uprof/util/hex.h"
#include "uprof/util/unique_fd.h"

namespace uprof {
namespace {

constexpr std::size_t kShownBytes = 8;  // of an instruction that does not decode

std::string byte_list(const std::vector<uint8_t>& bytes) {
  std::string s;
  char b[4];
  for (uint8_t v : bytes) {
    std::snprintf(b, sizeof b, "%02x", v);
    s += (s.empty() ? "" : " ") + std::string(b);
  }
  return s;
}

// The instruction's text and its own bytes, as Capstone decodes them.
void disassemble(Arch arch, std::span<const uint8_t> code, uint64_t address, SiteRefusal& r) {
  std::optional<DecodedInsn> insn;
  if (auto decoder = InsnDecoder::open(arch)) insn = decoder->decode(code, address);
  const std::size_t n = insn ? insn->length : std::min(code.size(), kShownBytes);
  r.bytes.assign(code.begin(), code.begin() + static_cast<std::ptrdiff_t>(n));
  r.insn = insn ? insn->text : "";
}

SiteRefusal make(Arch arch, const std::string& path, const std::string& function, uint64_t offset_in_function,
                 uint64_t file_offset, std::span<const uint8_t> code) {
  SiteRefusal r{.path = path, .function = function, .offset_in_function = offset_in_function,
                .file_offset = file_offset};
  disassemble(arch, code, file_offset, r);
  return r;
}

}  // namespace

std::string refusal_line(const SiteRefusal& r) {
  std::string where = r.function.empty() ? r.path + " at offset " + hex(r.file_offset)
                                         : r.function + (r.offset_in_function ? "+" + hex(r.offset_in_function) : "") +
                                               " (" + r.path + ", offset " + hex(r.file_offset) + ")";
  std::string which = r.function.empty() || r.offset_in_function ? "the instruction" : "its first instruction";
  std::string insn = r.bytes.empty() ? ""
                     : r.insn.empty()  ? ", [" + byte_list(r.bytes) + "] (which does not decode)"
                                       : ", " + r.insn + " [" + byte_list(r.bytes) + "]";
  std::string who = r.kernel_errno ? "the kernel refuses to probe " : "uprof does not probe ";
  std::string line = where + ": " + who + which + insn + ": " + r.reason;
  if (r.kernel_errno) line += " (" + errno_name(r.kernel_errno) + ")";
  return line;
}

std::optional<SiteRefusal> site_refusal(Arch arch, const std::string& path, const std::string& function,
                                        uint64_t offset_in_function, uint64_t file_offset,
                                        std::span<const uint8_t> code) {
  InsnInfo info = classify_insn(arch, code, file_offset);
  if (info.cls != InsnClass::Rejected) return std::nullopt;
  SiteRefusal r = make(arch, path, function, offset_in_function, file_offset, code);
  r.reason = info.why;
  r.kernel_errno = info.kernel_errno;
  return r;
}

std::string refused_site_line(Arch arch, const std::string& path, const std::string& function,
                              uint64_t offset_in_function, uint64_t file_offset, std::span<const uint8_t> code,
                              int kernel_errno, std::string_view reason) {
  SiteRefusal r = make(arch, path, function, offset_in_function, file_offset, code);
  InsnInfo info = classify_insn(arch, code, file_offset);
  r.reason = !code.empty() && info.cls == InsnClass::Rejected && info.kernel_errno ? info.why : std::string(reason);
  r.kernel_errno = kernel_errno;
  return refusal_line(r);
}

std::string refused_site_line(Arch arch, const std::string& path, const std::string& function,
                              uint64_t offset_in_function, uint64_t file_offset, int kernel_errno,
                              std::string_view reason) {
  std::array<uint8_t, 16> buf{};
  ssize_t n = 0;
  if (UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)); fd.valid())
    n = ::pread(fd.get(), buf.data(), buf.size(), static_cast<off_t>(file_offset));
  const std::span<const uint8_t> code(buf.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
  return refused_site_line(arch, path, function, offset_in_function, file_offset, code, kernel_errno, reason);
}

}  // namespace uprof
