// The data file: round trips, and every way a file can arrive damaged.
#include "uprof/store/data_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "support/test_support.h"
#include "uprof/store/varint.h"
#include "uprof/util/crc32.h"

namespace uprof {
namespace {

RecordingMeta sample_meta() {
  return {.arch = Arch::Arm64, .command = {"./mytest", "100"}, .kernel = "6.18.0", .hostname = "box",
          .uprof_version = "0.1.0", .start_realtime_ns = 1700000000123456789ull,
          .start_monotonic_ns = 5000000000ull, .probe_cost_ns = 1300, .probe_costs_ns = {1300, 15968},
          .probe_hit_costs_ns = {2100, 7400}};
}

std::vector<ProbeInfo> sample_probes() {
  ProbeInfo entry{.index = 0, .kind = ProbeKind::Entry, .spec = "add %x0 %x1", .path = "/bin/mytest",
                  .build_id = "abcd", .function = "add", .symbol = "add", .file_offset = 0x7e4, .vaddr = 0x4007e4,
                  .offset_in_function = 0, .values = {}};
  entry.values.push_back({.name = "%x0", .source = ValueSource::Register, .reg = 0, .stack_offset = 0, .size = 8,
                          .is_signed = true});
  entry.values.push_back({.name = "$stack1", .source = ValueSource::Stack, .reg = 31, .stack_offset = -16,
                          .size = 4, .is_signed = false});
  ProbeInfo ret = entry;
  ret.index = 1;
  ret.kind = ProbeKind::Return;
  ret.spec = "add%return $retval";
  ret.values = {{.name = "$retval", .source = ValueSource::ReturnValue, .reg = 0, .stack_offset = 0, .size = 8,
                 .is_signed = true}};
  return {entry, ret};
}

// A stream with every kind of event; entry i has values (i, -i), return i + ~0.
std::vector<Event> sample_events(int n) {
  std::vector<Event> ev;
  uint64_t t = 5000001000ull;
  Event comm{.kind = EventKind::Comm, .probe = 0, .pid = 40, .tid = 40, .time = t, .nvalues = 0, .values = {},
             .lost = 0, .comm = "mytest"};
  ev.push_back(comm);
  for (int i = 0; i < n; i++) {
    Event e{.kind = EventKind::Sample, .probe = 0, .pid = 40, .tid = static_cast<uint32_t>(40 + i % 3),
            .time = t += 100, .nvalues = 2, .values = {}, .lost = 0, .comm = {}};
    e.values[0] = static_cast<uint64_t>(i);
    e.values[1] = static_cast<uint64_t>(-static_cast<int64_t>(i));
    ev.push_back(e);
    Event r = e;
    r.probe = 1;
    r.time = (t += 50) - (i % 2 ? 70 : 0);  // not monotonic: samples of other CPUs may be older
    r.nvalues = 1;
    r.values = {};
    r.values[0] = ~static_cast<uint64_t>(i);
    ev.push_back(r);
  }
  ev.push_back({.kind = EventKind::Lost, .probe = 1, .pid = 0, .tid = 0, .time = t += 10, .nvalues = 0,
                .values = {}, .lost = 12, .comm = {}});
  Event fork{.kind = EventKind::Fork, .probe = 0, .pid = 41, .tid = 41, .time = t += 10, .nvalues = 2,
             .values = {}, .lost = 0, .comm = {}};
  fork.values[0] = 40;
  fork.values[1] = 40;
  ev.push_back(fork);
  ev.push_back({.kind = EventKind::Exit, .probe = 0, .pid = 40, .tid = 42, .time = t += 10, .nvalues = 0,
                .values = {}, .lost = 0, .comm = {}});
  return ev;
}

void write_file(const std::string& path, const std::vector<Event>& events, bool finish = true) {
  auto w = DataFileWriter::create(path, sample_meta(), sample_probes());
  ASSERT_TRUE(w) << w.error().message;
  for (const auto& e : events) ASSERT_TRUE(w->add(e));
  Trailer t{.end_monotonic_ns = 9000000000ull, .events = events.size(), .lost = 12, .exit_status = 3,
            .counts = {{1000, 1000}, {1000, 1012}}};
  if (finish) {
    ASSERT_TRUE(w->finish(t));
  } else {
    ASSERT_TRUE(w->flush());
  }
}

std::vector<Event> read_all(DataFileReader& r) {
  std::vector<Event> out;
  Event e;
  while (r.next(e)) out.push_back(e);
  return out;
}

void expect_same(const Event& a, const Event& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.tid, b.tid);
  if (a.kind == EventKind::Sample || a.kind == EventKind::Lost) {
    EXPECT_EQ(a.probe, b.probe);
  }
  EXPECT_EQ(a.lost, b.lost);
  EXPECT_EQ(a.comm, b.comm);
  EXPECT_EQ(a.nvalues, b.nvalues);
  for (int i = 0; i < a.nvalues; i++) EXPECT_EQ(a.values[i], b.values[i]);
}

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void spit(const std::string& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

TEST(DataFile, RoundTrip) {
  test::TempDir dir;
  auto events = sample_events(20000);  // several 64 KiB blocks
  write_file(dir.file("u.data"), events);
  auto r = DataFileReader::open(dir.file("u.data"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->arch(), Arch::Arm64);
  EXPECT_EQ(r->meta().command, (std::vector<std::string>{"./mytest", "100"}));
  EXPECT_EQ(r->meta().kernel, "6.18.0");
  EXPECT_EQ(r->meta().start_realtime_ns, 1700000000123456789ull);
  EXPECT_EQ(r->meta().probe_cost_ns, 1300u);
  EXPECT_EQ(r->meta().probe_costs_ns, (std::vector<uint64_t>{1300, 15968}));
  EXPECT_EQ(r->meta().probe_hit_costs_ns, (std::vector<uint64_t>{2100, 7400}));
  ASSERT_EQ(r->probes().size(), 2u);
  EXPECT_EQ(r->probes()[0].values[1].name, "$stack1");
  EXPECT_EQ(r->probes()[0].values[1].stack_offset, -16);
  EXPECT_EQ(r->probes()[0].vaddr, 0x4007e4u);
  EXPECT_EQ(r->probes()[1].kind, ProbeKind::Return);
  auto back = read_all(*r);
  ASSERT_EQ(back.size(), events.size());
  for (std::size_t i = 0; i < events.size(); i++) expect_same(events[i], back[i]);
  EXPECT_TRUE(r->problems().empty());
  ASSERT_TRUE(r->trailer());
  EXPECT_EQ(r->trailer()->exit_status, 3);
  EXPECT_EQ(r->trailer()->counts[1].kernel, 1012u);
}

TEST(DataFile, CompactForEntryReturnPairs) {
  // Issue target: at most 32 bytes per event for entry+return with two values.
  test::TempDir dir;
  auto events = sample_events(50000);
  write_file(dir.file("u.data"), events);
  double per_event = static_cast<double>(std::filesystem::file_size(dir.file("u.data"))) / events.size();
  EXPECT_LT(per_event, 32.0);
  RecordProperty("bytes_per_event", std::to_string(per_event));
  std::printf("data file: %.2f bytes per event\n", per_event);
}

TEST(DataFile, CutShortFileReportsWhatItHolds) {
  test::TempDir dir;
  auto events = sample_events(20000);
  write_file(dir.file("u.data"), events);
  std::string whole = slurp(dir.file("u.data"));
  // Cut in the middle of the last events block: everything before it is read.
  spit(dir.file("cut.data"), whole.substr(0, whole.size() * 3 / 4));
  auto r = DataFileReader::open(dir.file("cut.data"));
  ASSERT_TRUE(r);
  auto back = read_all(*r);
  EXPECT_GT(back.size(), events.size() / 3);
  EXPECT_LT(back.size(), events.size());
  for (std::size_t i = 0; i < back.size(); i++) expect_same(events[i], back[i]);
  EXPECT_FALSE(r->trailer());
  ASSERT_EQ(r->problems().size(), 1u);
  EXPECT_NE(r->problems()[0].find("cut short at byte "), std::string::npos) << r->problems()[0];
}

TEST(DataFile, UnfinishedFileWithWholeBlocksSaysNoTrailer) {
  test::TempDir dir;
  auto events = sample_events(100);
  write_file(dir.file("u.data"), events, /*finish=*/false);
  auto r = DataFileReader::open(dir.file("u.data"));
  ASSERT_TRUE(r);
  EXPECT_EQ(read_all(*r).size(), events.size());
  ASSERT_EQ(r->problems().size(), 1u);
  EXPECT_NE(r->problems()[0].find("(no trailer)"), std::string::npos);
}

TEST(DataFile, EveryTruncationAndEveryFlippedByteIsSafe) {
  test::TempDir dir;
  auto events = sample_events(120);
  write_file(dir.file("u.data"), events);
  std::string whole = slurp(dir.file("u.data"));
  for (std::size_t n = 0; n < whole.size(); n += 5) {
    spit(dir.file("t.data"), whole.substr(0, n));
    auto r = DataFileReader::open(dir.file("t.data"));
    if (!r) {
      EXPECT_NE(r.error().message.find(dir.file("t.data")), std::string::npos);
      continue;
    }
    auto back = read_all(*r);
    for (std::size_t i = 0; i < back.size(); i++) expect_same(events[i], back[i]);
    EXPECT_FALSE(r->problems().empty()) << "cut at " << n;
  }
  for (std::size_t i = 0; i < whole.size(); i += 2) {
    std::string bad = whole;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    spit(dir.file("f.data"), bad);
    auto r = DataFileReader::open(dir.file("f.data"));
    if (!r) continue;
    auto back = read_all(*r);
    EXPECT_LE(back.size(), events.size());
    // A flip is always noticed: by the CRC, or as damage in a header.
    EXPECT_FALSE(r->problems().empty() && back.size() == events.size() && r->trailer() &&
                 i >= kHeaderSize && bad != whole)
        << "flip at byte " << i << " went unnoticed";
  }
}

// A file with sample_meta() and sample_probes(), then one hand-made EVENTS section
// holding `payload` (v base_time, v count, events), with its CRC right.
void write_with_events_payload(const std::string& path, const std::string& payload) {
  {
    auto w = DataFileWriter::create(path, sample_meta(), sample_probes());
    ASSERT_TRUE(w) << w.error().message;
  }
  std::string head;
  auto put = [&](auto v) { head.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(static_cast<uint32_t>(SectionKind::Events));
  put(crc32_update(0, payload.data(), payload.size()));
  put(static_cast<uint64_t>(payload.size()));
  std::ofstream(path, std::ios::binary | std::ios::app) << head << payload;
}

TEST(DataFile, DamagedTidAndPidDeltaWrapInsteadOfOverflowing) {
  // pid = tid + delta was summed as int64_t, so a tid of 2^63 - 1 and a delta of +1
  // overflowed (UB). clang's UBSan stops data_file_fuzz on this input
  // (tests/fuzz/corpus/data_file/tid_overflow.data); g++'s folds the narrowing first.
  test::TempDir dir;
  std::string p;
  put_varint(p, 1000);  // base time
  put_varint(p, 1);     // one event
  p.push_back(static_cast<char>(EventKind::Sample));
  put_varint(p, zigzag(0));                            // dt
  put_varint(p, 0);                                    // probe 0: two values
  put_varint(p, uint64_t{INT64_MAX});                  // tid
  put_varint(p, zigzag(1));                            // pid - tid
  put_varint(p, zigzag(7));
  put_varint(p, zigzag(-7));
  write_with_events_payload(dir.file("u.data"), p);
  auto r = DataFileReader::open(dir.file("u.data"));
  ASSERT_TRUE(r) << r.error().message;
  auto back = read_all(*r);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].tid, 0xffffffffu);
  EXPECT_EQ(back[0].pid, 0u);  // the low 32 bits of 2^63, as a wrapping sum gives
  EXPECT_EQ(back[0].values[1], static_cast<uint64_t>(-7));
}

// A damaged event in a block whose CRC is right (a bug in a writer, not the disk): the
// events before it are read, and the problem names the byte of the file and of the payload.
TEST(DataFile, DamagedEventNamesItsFileByte) {
  test::TempDir dir;
  std::string p;
  put_varint(p, 1000);  // base time
  put_varint(p, 2);     // two events, the second cut inside its values
  for (int i = 0; i < 2; i++) {
    p.push_back(static_cast<char>(EventKind::Sample));
    put_varint(p, zigzag(10));
    put_varint(p, 1);  // probe 1: one value
    put_varint(p, 41);
    put_varint(p, zigzag(-1));
    if (i == 0) put_varint(p, zigzag(5));
  }
  write_with_events_payload(dir.file("u.data"), p);
  const uint64_t payload_at = std::filesystem::file_size(dir.file("u.data")) - p.size();
  auto r = DataFileReader::open(dir.file("u.data"));
  ASSERT_TRUE(r) << r.error().message;
  auto back = read_all(*r);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].time, 1010u);
  EXPECT_EQ(back[0].values[0], 5u);
  ASSERT_EQ(r->problems().size(), 2u);  // the damage, then no trailer
  EXPECT_EQ(r->problems()[0], "byte " + std::to_string(payload_at + p.size()) + ": EVENTS at payload byte " +
                                  std::to_string(p.size()) + ": truncated sample values; the rest of that block "
                                  "was skipped");
}

// META's per-probe costs: a file without them reads as "unknown" (empty), and a list
// that is not numbers is an error naming the section and byte, not a silent 0.
TEST(DataFile, PerProbeCostsInMeta) {
  RecordingMeta m = sample_meta();
  m.probe_costs_ns.clear();
  m.probe_hit_costs_ns.clear();
  std::string bytes = encode_meta(m);
  EXPECT_EQ(bytes.find("probe_costs_ns"), std::string::npos);
  EXPECT_EQ(bytes.find("probe_hit_costs_ns"), std::string::npos);
  ByteReader r0(bytes.data(), bytes.size());
  auto none = decode_meta(r0, Arch::X86_64);
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->probe_costs_ns.empty());
  EXPECT_TRUE(none->probe_hit_costs_ns.empty());

  for (const char* key : {"probe_costs_ns", "probe_hit_costs_ns"})
    for (const char* bad : {"12 x", "12  13", " 12", "-1", "1e3"}) {
      std::string p;
      put_varint(p, 1);
      put_string(p, key);
      put_string(p, bad);
      ByteReader r(p.data(), p.size());
      auto back = decode_meta(r, Arch::X86_64);
      ASSERT_FALSE(back) << bad;
      EXPECT_NE(back.error().message.find("META at payload byte"), std::string::npos) << back.error().message;
      EXPECT_NE(back.error().message.find(std::string(key) + " is not"), std::string::npos) << back.error().message;
    }
}

TEST(DataFile, ErrorsNameTheFile) {
  test::TempDir dir;
  auto msg = [&](const std::string& name, const std::string& content) {
    spit(dir.file(name), content);
    auto r = DataFileReader::open(dir.file(name));
    return r ? std::string("(opened)") : r.error().message;
  };
  EXPECT_EQ(msg("empty", ""), "store: " + dir.file("empty") + ": empty file, not a uprof data file");
  EXPECT_EQ(msg("text", "hello world, this is text\n"), "store: " + dir.file("text") + ": not a uprof data file");
  std::string newer(kDataMagic, 8);
  newer += std::string("\x02\x00\x00\x00\x01\x01\x00\x00", 8);
  EXPECT_EQ(msg("newer", newer), "store: " + dir.file("newer") +
                                     ": data file format 2.0 (this uprof reads format 1.x; it was made by a newer uprof)");
  std::string header_only(kDataMagic, 8);
  header_only += std::string("\x01\x00\x00\x00\x01\x01\x00\x00", 8);
  EXPECT_EQ(msg("hdr", header_only), "store: " + dir.file("hdr") + ": cut short at byte 16 before its META section");
  EXPECT_EQ(DataFileReader::open(dir.file("nope")).error().message,
            "store: " + dir.file("nope") + ": No such file or directory");
  auto w = DataFileWriter::create(dir.file("no/such/dir/u.data"), sample_meta(), sample_probes());
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().message,
            "store: " + dir.file("no/such/dir/u.data") + ": the directory " + dir.file("no/such/dir") + " does not exist");
}

// The writer makes its file beside the name and renames it there once META and PROBES
// are written: the name never shows a file without them, and it is 0600.
TEST(DataFile, TheFileIsPrivateAndAppearsWithItsProbes) {
  test::TempDir dir;
  const std::string path = dir.file("u.data");
  auto w = DataFileWriter::create(path, sample_meta(), sample_probes());
  ASSERT_TRUE(w) << w.error().message;
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), w->bytes_written());
  auto r = DataFileReader::open(path);  // readable from here on: META and PROBES are whole
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->probes().size(), sample_probes().size());
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) entries += e.path() != path;
  EXPECT_EQ(entries, 0u) << "a temporary file was left";
}

TEST(DataFile, AnOutputThatIsNotARegularFileIsRefused) {
  auto w = DataFileWriter::create("/dev/full", sample_meta(), sample_probes());
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().message, "store: /dev/full is a character device, not a regular file: uprof writes only regular "
                               "files; name another file");
  test::TempDir dir;
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto r = DataFileReader::open(fifo);  // O_NONBLOCK: no writer, no hang
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "store: " + fifo + " is a FIFO (named pipe), not a regular file: uprof reads a data "
                               "file by offset, which a pipe cannot give; save it to a file first");
}

// Typed DWARF values (format 1.1) keep every field through the PROBES section:
// an enum, a struct over two slots with its members, a deref slot, a constant,
// and an unavailable value with its reason.
TEST(DataFile, TypedValuesRoundTrip) {
  ProbeInfo p{.index = 0, .kind = ProbeKind::Entry, .spec = "f", .path = "/bin/f", .build_id = "", .function = "f",
              .symbol = "f", .file_offset = 0x1000, .vaddr = 0x401000, .offset_in_function = 0, .values = {}};
  ValueSpec color{.name = "c", .source = ValueSource::Register, .reg = 5, .size = 4, .is_signed = true};
  color.kind = ValueKind::Enum;
  color.type = "enum color";
  color.enumerators = {{0, "RED"}, {7, "BLUE"}, {-2, "DARK"}};
  ValueSpec pair_lo{.name = "p", .source = ValueSource::Register, .reg = 5, .size = 8};
  pair_lo.kind = ValueKind::Struct;
  pair_lo.type = "struct pair";
  pair_lo.total_size = 16;
  pair_lo.members = {{.name = "x", .offset = 0, .size = 8, .kind = ValueKind::Integer, .is_signed = true},
                     {.name = "y", .offset = 8, .size = 8, .kind = ValueKind::Integer, .is_signed = false}};
  ValueSpec pair_hi = pair_lo;
  pair_hi.reg = 4;
  pair_hi.continues = true;
  pair_hi.members.clear();
  ValueSpec big{.name = "b", .source = ValueSource::Register, .reg = 0, .size = 8};
  big.deref = true;
  big.deref_offset = -24;
  big.type = "long";
  ValueSpec k{.name = "k", .source = ValueSource::Constant, .size = 8};
  k.type = "long";
  k.constant = -3;
  ValueSpec gone{.name = "a", .source = ValueSource::Unavailable, .size = 8};
  gone.type = "int";
  gone.reason = "optimized out";
  ValueSpec raw{.name = "%di", .source = ValueSource::Register, .reg = 5, .size = 8, .hex = true};
  p.values = {color, pair_lo, pair_hi, big, k, gone, raw};

  std::string bytes = encode_probes({p});
  ByteReader r(std::as_bytes(std::span(bytes.data(), bytes.size())));
  auto back = decode_probes(r);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), 1u);
  const auto& v = back->front().values;
  ASSERT_EQ(v.size(), 7u);
  EXPECT_EQ(v[0].kind, ValueKind::Enum);
  EXPECT_EQ(v[0].type, "enum color");
  EXPECT_EQ(v[0].enumerators, color.enumerators);
  EXPECT_EQ(v[1].members, pair_lo.members);
  EXPECT_EQ(v[1].total_size, 16u);
  EXPECT_TRUE(v[2].continues);
  EXPECT_EQ(v[2].reg, 4);
  EXPECT_TRUE(v[3].deref);
  EXPECT_EQ(v[3].deref_offset, -24);
  EXPECT_EQ(v[4].source, ValueSource::Constant);
  EXPECT_EQ(v[4].constant, -3);
  EXPECT_EQ(v[5].source, ValueSource::Unavailable);
  EXPECT_EQ(v[5].reason, "optimized out");
  EXPECT_FALSE(v[6].typed());
  EXPECT_TRUE(v[6].hex);
  EXPECT_EQ(r.remaining(), 0u);

  // Cut anywhere inside, it is an error naming the payload byte, never a crash.
  for (std::size_t cut = 0; cut < bytes.size(); cut++) {
    ByteReader part(std::as_bytes(std::span(bytes.data(), cut)));
    auto d = decode_probes(part);
    EXPECT_FALSE(d) << "cut at " << cut;
    if (!d) {
      EXPECT_NE(d.error().message.find("PROBES at payload byte"), std::string::npos) << d.error().message;
    }
  }
}

}  // namespace
}  // namespace uprof

namespace uprof {
namespace {

TEST(DataFile, SiteFlagRoundTrips) {
  ProbeInfo line;
  line.kind = ProbeKind::Entry;
  line.function = "lines.c:24";
  line.site = true;
  ProbeInfo plain;
  plain.index = 1;
  plain.function = "add";
  std::string bytes = encode_probes({line, plain});
  ByteReader r(std::as_bytes(std::span(bytes.data(), bytes.size())));
  auto back = decode_probes(r);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), 2u);
  EXPECT_TRUE((*back)[0].site);
  EXPECT_FALSE((*back)[0].usdt);
  EXPECT_EQ((*back)[0].function, "lines.c:24");
  EXPECT_FALSE((*back)[1].site);
}

}  // namespace
}  // namespace uprof
