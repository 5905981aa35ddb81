#include "uprof/resolve/find/ld_so_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "uprof/util/byte_reader.h"
#include "uprof/util/unique_fd.h"

namespace uprof {
namespace {

// The two headers, as ldconfig lays them out on a 64-bit host:
//   old: "ld.so-1.7.0" (11 bytes), 1 pad byte, uint32 nlibs            = 16 bytes
//        entry: int32 flags, uint32 key, uint32 value                  = 12 bytes
//   new: "glibc-ld.so.cache" "1.1" (20 bytes), uint32 nlibs, uint32 len_strings,
//        uint8 flags (bits 0-1: endianness), 3 pad bytes, uint32 extension_offset,
//        3 unused uint32                                               = 48 bytes
//        entry: int32 flags, uint32 key, uint32 value, uint32 osversion,
//               uint64 hwcap                                           = 24 bytes
// In the old format, key/value count from the end of the old entries; in the new
// format they count from the first byte of the new header.
constexpr std::string_view kOldMagic = "ld.so-1.7.0";
constexpr std::string_view kNewMagic = "glibc-ld.so.cache1.1";
constexpr std::size_t kOldHeaderSize = 16;
constexpr std::size_t kOldNlibsOffset = 12;
constexpr std::size_t kOldEntrySize = 12;
constexpr std::size_t kNewHeaderSize = 48;
constexpr std::size_t kNewNlibsOffset = 20;
constexpr std::size_t kNewLenStringsOffset = 24;
constexpr std::size_t kNewFlagsOffset = 28;
constexpr std::size_t kNewEntrySize = 24;
// The new header follows the old entries at the next multiple of its alignment
// (8: the entries hold a uint64).
constexpr std::size_t kNewHeaderAlign = 8;

// Endianness marker in the new header's flags byte (glibc 2.33+; 0 from older
// ldconfig means "unknown", which the loader accepts).
constexpr uint8_t kEndianMask = 3;
constexpr uint8_t kEndianInvalid = 1;
constexpr uint8_t kEndianLittle = 2;
constexpr uint8_t kEndianBig = 3;

bool magic_at(const ByteReader& r, std::size_t off, std::string_view magic) {
  ByteReader c = r;
  if (!c.seek(off)) return false;
  auto b = c.bytes(magic.size());
  return b && std::memcmp(b->data(), magic.data(), magic.size()) == 0;
}

// The NUL-terminated string at `table + rel`; `field_off` is where the offset
// itself was read, so the message points at the corrupt entry.
Result<std::string> string_field(const ByteReader& r, std::size_t table, uint32_t rel,
                                 std::size_t field_off, const char* what) {
  std::size_t at = table + rel;  // table <= size and rel < 2^32: no overflow
  if (at >= r.size())
    return err(what, " offset at byte offset ", field_off, " points to byte offset ", at,
               ", outside the file (", r.size(), " bytes)");
  auto s = r.cstring_at(at);
  if (!s)
    return err(what, " at byte offset ", at, " (from byte offset ", field_off,
               ") has no terminating NUL before the end of the file");
  return std::string(*s);
}

// Checks that `count` entries of `entry_size` fit between `start` and the end
// before anything is sized by `count`.
Status check_table_fits(const ByteReader& r, std::size_t count_off, uint32_t count,
                        std::size_t start, std::size_t entry_size) {
  uint64_t need = uint64_t{count} * entry_size;
  uint64_t have = start <= r.size() ? r.size() - start : 0;
  if (need > have)
    return err("entry count ", count, " at byte offset ", count_off, " needs ", need,
               " bytes of entries from byte offset ", start, ", but the file ends ", have,
               " bytes later (truncated or corrupt)");
  return ok();
}

Result<std::vector<LdCacheEntry>> parse_new(ByteReader r, std::size_t base) {
  if (r.size() - base < kNewHeaderSize)
    return err("truncated header at byte offset ", base, ": need ", kNewHeaderSize,
               " bytes, file has ", r.size() - base);
  uint32_t nlibs = *r.peek_at<uint32_t>(base + kNewNlibsOffset);
  uint32_t len_strings = *r.peek_at<uint32_t>(base + kNewLenStringsOffset);
  uint8_t hflags = *r.peek_at<uint8_t>(base + kNewFlagsOffset);

  uint8_t endian = hflags & kEndianMask;
  uint8_t host = std::endian::native == std::endian::little ? kEndianLittle : kEndianBig;
  if (endian == kEndianInvalid)
    return err("ldconfig marked this cache invalid (flags byte at byte offset ",
               base + kNewFlagsOffset, ")");
  if (endian != 0 && endian != host)
    return err("cache is ", endian == kEndianBig ? "big" : "little",
               "-endian, this host is not (flags byte at byte offset ",
               base + kNewFlagsOffset, ")");

  std::size_t entries = base + kNewHeaderSize;
  UPROF_TRY(check_table_fits(r, base + kNewNlibsOffset, nlibs, entries, kNewEntrySize));
  std::size_t strings = entries + std::size_t{nlibs} * kNewEntrySize;
  if (len_strings > r.size() - strings)
    return err("string table of ", len_strings, " bytes (length at byte offset ",
               base + kNewLenStringsOffset, ") starts at byte offset ", strings,
               " but the file ends at ", r.size());

  // Safe: nlibs entries of 24 bytes are known to be present.
  std::vector<LdCacheEntry> out;
  out.reserve(nlibs);
  r.seek(entries);
  for (uint32_t i = 0; i < nlibs; i++) {
    std::size_t at = r.offset();
    auto flags = r.read<int32_t>();
    auto key = r.read<uint32_t>();
    auto value = r.read<uint32_t>();
    auto osversion = r.read<uint32_t>();
    auto hwcap = r.read<uint64_t>();
    if (!flags || !key || !value || !osversion || !hwcap)
      return err("truncated entry ", i, " at byte offset ", at);
    LdCacheEntry e;
    e.flags = static_cast<uint32_t>(*flags);
    e.hwcap = *hwcap;
    UPROF_ASSIGN(e.soname, string_field(r, base, *key, at + 4, "soname"));
    UPROF_ASSIGN(e.path, string_field(r, base, *value, at + 8, "path"));
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<LdCacheEntry>> parse_old(ByteReader r) {
  if (r.size() < kOldHeaderSize)
    return err("truncated header at byte offset 0: need ", kOldHeaderSize,
               " bytes, file has ", r.size());
  uint32_t nlibs = *r.peek_at<uint32_t>(kOldNlibsOffset);
  UPROF_TRY(check_table_fits(r, kOldNlibsOffset, nlibs, kOldHeaderSize, kOldEntrySize));
  std::size_t strings = kOldHeaderSize + std::size_t{nlibs} * kOldEntrySize;

  // Since glibc 2.2 the real table hides in the old format's string area.
  std::size_t aligned = (strings + kNewHeaderAlign - 1) & ~(kNewHeaderAlign - 1);
  if (magic_at(r, aligned, kNewMagic)) return parse_new(r, aligned);

  std::vector<LdCacheEntry> out;
  out.reserve(nlibs);
  r.seek(kOldHeaderSize);
  for (uint32_t i = 0; i < nlibs; i++) {
    std::size_t at = r.offset();
    auto flags = r.read<int32_t>();
    auto key = r.read<uint32_t>();
    auto value = r.read<uint32_t>();
    if (!flags || !key || !value) return err("truncated entry ", i, " at byte offset ", at);
    LdCacheEntry e;
    e.flags = static_cast<uint32_t>(*flags);
    UPROF_ASSIGN(e.soname, string_field(r, strings, *key, at + 4, "soname"));
    UPROF_ASSIGN(e.path, string_field(r, strings, *value, at + 8, "path"));
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<LdCacheEntry>> parse_any(std::span<const std::byte> data) {
  ByteReader r(data);
  if (magic_at(r, 0, kNewMagic)) return parse_new(r, 0);
  if (magic_at(r, 0, kOldMagic)) return parse_old(r);
  // A file that stops inside a magic string is truncated rather than foreign.
  std::string_view head(reinterpret_cast<const char*>(data.data()), data.size());
  if (kNewMagic.starts_with(head) || kOldMagic.starts_with(head))
    return err("truncated header at byte offset 0: file has only ", data.size(), " bytes");
  return err("bad magic at byte offset 0: expected \"", kNewMagic, "\" or \"", kOldMagic, "\"");
}

}  // namespace

// Library flags (glibc ldconfig.h): low byte is the kind, high byte the ABI; the
// architecture table holds its own pair.
uint32_t ld_cache_flags_for(Arch arch) { return arch_info(arch).ld_so_cache_flags; }

bool ld_cache_entry_matches(const LdCacheEntry& e, Arch arch) {
  return e.flags == ld_cache_flags_for(arch);
}

Result<std::vector<LdCacheEntry>> parse_ld_so_cache(std::span<const std::byte> data) {
  auto r = parse_any(data);
  if (!r) return err("ld.so.cache: ", r.error().message);
  return r;
}

Result<std::vector<LdCacheEntry>> read_ld_so_cache(const std::string& path) {
  // A real cache is tens of kilobytes; refuse anything absurd rather than allocate it.
  constexpr off_t kMaxSize = 256 << 20;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return err("ld.so.cache: ", path, ": ", std::strerror(errno));
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return err("ld.so.cache: ", path, ": ", std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return err("ld.so.cache: ", path, ": not a regular file");
  if (st.st_size > kMaxSize)
    return err("ld.so.cache: ", path, ": ", st.st_size, " bytes is too large for a cache");

  std::vector<std::byte> buf(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (got < buf.size()) {
    ssize_t n = ::read(fd.get(), buf.data() + got, buf.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return err("ld.so.cache: ", path, ": ", std::strerror(errno));
    if (n == 0) break;  // shrank while reading: parse what is there
    got += static_cast<std::size_t>(n);
  }
  buf.resize(got);

  auto r = parse_any(buf);
  if (!r) return err("ld.so.cache: ", path, ": ", r.error().message);
  return r;
}

}  // namespace uprof
