#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "uprof/store/data_file.h"
#include "uprof/store/varint.h"
#include "uprof/util/crc32.h"

namespace uprof {
namespace {

constexpr std::size_t kBlockTarget = 64 << 10;

void put_u16(std::string& s, uint16_t v) { s.append(reinterpret_cast<const char*>(&v), 2); }
void put_u32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void put_u64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }

}  // namespace

DataFileWriter::~DataFileWriter() = default;

Status check_output_path(const std::string& path) {
  if (path.empty()) return err("store: no output file named");
  if (auto st = PrivateFile::check(path); !st) return err("store: ", st.error().message);
  return ok();
}

Result<DataFileWriter> DataFileWriter::create(const std::string& path, const RecordingMeta& meta,
                                              const std::vector<ProbeInfo>& probes) {
  DataFileWriter w;
  w.path_ = path;
  auto file = PrivateFile::create(path);
  if (!file) return err("store: ", file.error().message);
  w.file_ = std::move(file).value();
  w.codec_ = event_codec_state(probes, 0);

  std::string header(kDataMagic, sizeof kDataMagic);
  put_u16(header, kDataMajor);
  put_u16(header, kDataMinor);
  header.push_back(static_cast<char>(meta.arch));
  header.push_back(1);  // CLOCK_MONOTONIC
  put_u16(header, 0);
  ssize_t n = ::write(w.file_.fd(), header.data(), header.size());
  if (n != static_cast<ssize_t>(header.size())) return err("store: ", path, ": ", std::strerror(n < 0 ? errno : ENOSPC));
  w.bytes_ = header.size();
  UPROF_TRY(w.write_section(SectionKind::Meta, encode_meta(meta)));
  UPROF_TRY(w.write_section(SectionKind::Probes, encode_probes(probes)));
  // Under its name now, not at the end: a uprof killed later leaves a file that reads up
  // to the kill. Until here a failure (a disk already full) leaves the name as it was.
  if (auto st = w.file_.place(); !st) return err("store: ", st.error().message);
  return w;
}

Status DataFileWriter::write_section(SectionKind kind, const std::string& payload) {
  if (failed_) return err("store: ", path_, ": an earlier write failed");
  std::string head;
  put_u32(head, static_cast<uint32_t>(kind));
  put_u32(head, crc32_update(0, payload.data(), payload.size()));
  put_u64(head, payload.size());
  // One buffer, one write loop: a section is either whole on disk or is the cut end.
  std::string all = head + payload;
  std::size_t done = 0;
  while (done < all.size()) {
    ssize_t n = ::write(file_.fd(), all.data() + done, all.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // A write that makes no progress is a full disk too (write(2) returns 0 only
      // there, for a regular file).
      int e = n < 0 ? errno : ENOSPC;
      failed_ = true;
      write_errno_ = e;
      // Drop the partial section, so that the file ends at its last whole one
      // (not possible on a device such as /dev/full; the reader copes either way).
      if (done > 0) {
        int truncated = ::ftruncate(file_.fd(), static_cast<off_t>(bytes_));
        (void)truncated;
      }
      errno = e;
      return err("store: ", path_, ": write failed at byte ", bytes_ + done, ": ", std::strerror(e));
    }
    done += static_cast<std::size_t>(n);
  }
  bytes_ += all.size();
  return ok();
}

Status DataFileWriter::add(const Event& e) {
  if (block_count_ == 0) {
    block_base_ = e.time;
    codec_.time = e.time;
  }
  encode_event(e, codec_, block_);
  block_count_++;
  events_++;
  if (block_.size() >= kBlockTarget) return flush();
  return ok();
}

Status DataFileWriter::flush() {
  if (block_count_ == 0) return ok();
  std::string payload;
  put_varint(payload, block_base_);
  put_varint(payload, block_count_);
  payload += block_.view();
  block_.clear();
  block_count_ = 0;
  return write_section(SectionKind::Events, payload);
}

Status DataFileWriter::finish(const Trailer& t) {
  UPROF_TRY(flush());
  UPROF_TRY(write_section(SectionKind::Trailer, encode_trailer(t)));
  if (::fsync(file_.fd()) != 0 && errno != EINVAL)
    return err("store: ", path_, ": ", std::strerror(errno));
  return ok();
}

}  // namespace uprof
