#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "uprof/store/data_file.h"
#include "uprof/store/varint.h"
#include "uprof/util/crc32.h"
#include "uprof/util/file_type.h"

namespace uprof {
namespace {

struct SectionHeader {
  uint32_t kind;
  uint32_t crc;
  uint64_t size;
};

bool pread_all(int fd, void* buf, std::size_t n, uint64_t off) {
  auto* p = static_cast<char*>(buf);
  while (n) {
    ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
    off += static_cast<uint64_t>(r);
  }
  return true;
}

}  // namespace

Result<DataFileReader> DataFileReader::open(const std::string& path) {
  DataFileReader r;
  r.path_ = path;
  // O_NONBLOCK: a FIFO with no writer would block open(2) forever; it is refused below.
  r.fd_.reset(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!r.fd_.valid()) return err("store: ", path, ": ", std::strerror(errno));
  struct stat st {};
  if (fstat(r.fd_.get(), &st) != 0) return err("store: ", path, ": ", std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return err("store: ", path, ": is a directory");
  // The reader seeks (META and PROBES first, the trailer's counts, damage skipped by
  // offset): a pipe cannot be read that way, a device is no data file.
  if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
    return err("store: ", path, " is ", file_type_name(st.st_mode), ", not a regular file: uprof reads a data file "
               "by offset, which a pipe cannot give; save it to a file first");
  if (!S_ISREG(st.st_mode))
    return err("store: ", path, " is ", file_type_name(st.st_mode), ", not a regular file: not a uprof data file");
  r.file_size_ = static_cast<uint64_t>(st.st_size);
  if (r.file_size_ == 0) return err("store: ", path, ": empty file, not a uprof data file");

  unsigned char h[kHeaderSize];
  if (r.file_size_ < kHeaderSize || !pread_all(r.fd_.get(), h, kHeaderSize, 0))
    return err("store: ", path, ": too short for a uprof data file (", r.file_size_, " bytes)");
  if (std::memcmp(h, kDataMagic, sizeof kDataMagic) != 0) return err("store: ", path, ": not a uprof data file");
  uint16_t major, minor;
  std::memcpy(&major, h + 8, 2);
  std::memcpy(&minor, h + 10, 2);
  if (major != kDataMajor)
    return err("store: ", path, ": data file format ", major, ".", minor, " (this uprof reads format ", kDataMajor,
               ".x; ", major > kDataMajor ? "it was made by a newer uprof" : "unknown version", ")");
  auto arch = arch_from_id(h[12]);
  if (!arch) return err("store: ", path, ": byte 12: unknown architecture ", int{h[12]});
  if (h[13] != 1) return err("store: ", path, ": byte 13: unknown clock ", int{h[13]});
  r.pos_ = kHeaderSize;

  // META and PROBES must be whole: without them no event can be read.
  for (SectionKind want : {SectionKind::Meta, SectionKind::Probes}) {
    uint64_t at = r.pos_;
    SectionHeader sh;
    if (r.file_size_ - r.pos_ < kSectionHeaderSize || !pread_all(r.fd_.get(), &sh, sizeof sh, r.pos_))
      return err("store: ", path, ": cut short at byte ", at, " before its ",
                 want == SectionKind::Meta ? "META" : "PROBES", " section");
    if (sh.kind != static_cast<uint32_t>(want))
      return err("store: ", path, ": byte ", at, ": expected section ", static_cast<uint32_t>(want), ", found ",
                 sh.kind);
    if (sh.size > kMaxSectionPayload || sh.size > r.file_size_ - at - kSectionHeaderSize)
      return err("store: ", path, ": byte ", at, ": section size ", sh.size, " runs past the end of the file");
    std::vector<std::byte> payload(sh.size);
    if (!pread_all(r.fd_.get(), payload.data(), payload.size(), at + kSectionHeaderSize))
      return err("store: ", path, ": read failed at byte ", at);
    if (crc32_update(0, payload.data(), payload.size()) != sh.crc)
      return err("store: ", path, ": byte ", at, ": ", want == SectionKind::Meta ? "META" : "PROBES",
                 " section is damaged (CRC mismatch)");
    ByteReader br(payload);
    if (want == SectionKind::Meta) {
      auto m = decode_meta(br, *arch);
      if (!m) return err("store: ", path, ": byte ", at + kSectionHeaderSize, ": ", m.error().message);
      r.meta_ = std::move(m).value();
    } else {
      auto p = decode_probes(br, minor);
      if (!p) return err("store: ", path, ": byte ", at + kSectionHeaderSize, ": ", p.error().message);
      r.probes_ = std::move(p).value();
      r.codec_ = event_codec_state(r.probes_, 0);
    }
    r.pos_ = at + kSectionHeaderSize + sh.size;
  }
  return r;
}

bool DataFileReader::load_next_block() {
  while (!done_) {
    uint64_t at = pos_;
    if (at == file_size_) {
      if (!trailer_) problems_.push_back("cut short at byte " + std::to_string(at) + " (no trailer): the recording "
                                         "did not finish; showing what it holds");
      done_ = true;
      return false;
    }
    SectionHeader sh;
    if (file_size_ - at < kSectionHeaderSize || !pread_all(fd_.get(), &sh, sizeof sh, at)) {
      problems_.push_back("cut short at byte " + std::to_string(at) + " (partial section header)");
      done_ = true;
      return false;
    }
    if (sh.kind < 1 || sh.kind > 4 || sh.size > kMaxSectionPayload) {
      problems_.push_back("damaged section header at byte " + std::to_string(at) + "; stopped reading there");
      done_ = true;
      return false;
    }
    if (sh.size > file_size_ - at - kSectionHeaderSize) {
      problems_.push_back("cut short at byte " + std::to_string(at) + " (the last section is incomplete)");
      done_ = true;
      return false;
    }
    pos_ = at + kSectionHeaderSize + sh.size;
    block_.resize(sh.size);
    if (!pread_all(fd_.get(), block_.data(), block_.size(), at + kSectionHeaderSize)) {
      problems_.push_back("read failed at byte " + std::to_string(at));
      done_ = true;
      return false;
    }
    if (crc32_update(0, block_.data(), block_.size()) != sh.crc) {
      problems_.push_back("damaged section at byte " + std::to_string(at) + " (CRC mismatch): skipped");
      continue;
    }
    ByteReader br(block_);
    if (sh.kind == static_cast<uint32_t>(SectionKind::Trailer)) {
      auto t = decode_trailer(br);
      if (t) trailer_ = std::move(t).value();
      else problems_.push_back("byte " + std::to_string(at) + ": " + t.error().message);
      continue;
    }
    if (sh.kind != static_cast<uint32_t>(SectionKind::Events)) {
      problems_.push_back("unexpected section " + std::to_string(sh.kind) + " at byte " + std::to_string(at) +
                          ": skipped");
      continue;
    }
    auto base = get_varint(br), count = get_varint(br);
    if (!base || !count || *count > br.remaining()) {
      problems_.push_back("byte " + std::to_string(at) + ": bad EVENTS block header: skipped");
      continue;
    }
    cur_ = br;
    block_offset_ = at + kSectionHeaderSize;
    block_left_ = *count;
    codec_.time = *base;
    if (block_left_) return true;
  }
  return false;
}

bool DataFileReader::next(Event& e) {
  for (;;) {
    if (block_left_ == 0 && !load_next_block()) return false;
    block_left_--;
    auto d = decode_event(cur_, codec_, e);
    if (d) return true;
    // The cursor stays where the event broke: name that byte of the file.
    problems_.push_back("byte " + std::to_string(block_offset_ + cur_.offset()) + ": " + d.error().message +
                        "; the rest of that block was skipped");
    block_left_ = 0;
  }
}

}  // namespace uprof
