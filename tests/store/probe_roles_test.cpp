// Format 1.6: each probe's role and report row go through the data file, and files of
// 1.5 and before (which have neither) still read.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <set>

#include "support/test_support.h"
#include "uprof/store/data_file.h"
#include "uprof/store/varint.h"
#include "uprof/util/crc32.h"

namespace uprof {
namespace {

ProbeInfo probe(uint32_t index, ProbeKind kind, std::string spec, std::string function, RowRole role,
                std::string row) {
  return ProbeInfo{.index = index, .kind = kind, .spec = std::move(spec), .path = "/bin/app", .build_id = "ab",
                   .function = function, .symbol = function, .file_offset = 0x1000 + index,
                   .vaddr = 0x401000 + index, .offset_in_function = 0, .values = {}, .role = role,
                   .row = std::move(row)};
}

// One probe of every role, as `record -e add -e add+0x10 -e twice -e lines.c:23
// -e 'usdt:python:gc__*' -e usdt:python:line` would make them.
std::vector<ProbeInfo> every_role() {
  std::vector<ProbeInfo> t{
      probe(0, ProbeKind::Entry, "add", "add", RowRole::Entry, "add"),
      probe(1, ProbeKind::Return, "add", "add", RowRole::Return, "add"),
      probe(2, ProbeKind::Exit, "risky", "risky", RowRole::Exit, "risky"),
      probe(3, ProbeKind::Entry, "twice", "twice", RowRole::Inlined, "twice"),
      probe(4, ProbeKind::Entry, "lines.c:23", "lines.c:23", RowRole::Line, "lines.c:23"),
      probe(5, ProbeKind::Entry, "usdt:python:gc__*", "python:gc__start", RowRole::UsdtStart, "python:gc"),
      probe(6, ProbeKind::Entry, "usdt:python:gc__*", "python:gc__done", RowRole::UsdtDone, "python:gc"),
      probe(7, ProbeKind::Entry, "usdt:python:line", "python:line", RowRole::Usdt, "python:line"),
      probe(8, ProbeKind::Entry, "add+0x10", "add", RowRole::Instruction, "add+0x10"),
  };
  for (std::size_t i = 3; i < 5; i++) t[i].site = true;
  for (std::size_t i = 5; i < 8; i++) t[i].usdt = true;
  t[2].frame = true;
  t[5].pair_key = 1;
  t[6].values.push_back({.name = "$arg1", .source = ValueSource::Register, .reg = 5});
  t[8].offset_in_function = 0x10;
  return t;
}

RecordingMeta app_meta() {
  RecordingMeta m;
  m.command = {"./app"};
  return m;
}

void expect_places(const std::vector<ProbeInfo>& got, const std::vector<ProbeInfo>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); i++) {
    EXPECT_EQ(got[i].role, want[i].role) << i << ": " << to_string(got[i].role);
    EXPECT_EQ(got[i].row, want[i].row) << i;
    EXPECT_EQ(got[i].spec, want[i].spec) << i;
    EXPECT_EQ(got[i].function, want[i].function) << i;
    EXPECT_EQ(got[i].kind, want[i].kind) << i;
    EXPECT_EQ(got[i].usdt, want[i].usdt) << i;
    EXPECT_EQ(got[i].site, want[i].site) << i;
    EXPECT_EQ(got[i].pair_key, want[i].pair_key) << i;
    EXPECT_EQ(got[i].values.size(), want[i].values.size()) << i;
  }
}

TEST(DataFileRoles, EveryRoleRoundTripsThroughTheProbesSection) {
  const auto probes = every_role();
  const std::string bytes = encode_probes(probes);
  ByteReader r(std::as_bytes(std::span(bytes.data(), bytes.size())));
  auto back = decode_probes(r);
  ASSERT_TRUE(back) << back.error().message;
  expect_places(*back, probes);
  EXPECT_EQ(r.remaining(), 0u);
  // Cut anywhere, it is an error naming the payload byte, never a crash.
  for (std::size_t cut = 0; cut < bytes.size(); cut++) {
    ByteReader part(std::as_bytes(std::span(bytes.data(), cut)));
    auto d = decode_probes(part);
    ASSERT_FALSE(d) << "cut at " << cut;
    EXPECT_NE(d.error().message.find("PROBES at payload byte"), std::string::npos) << d.error().message;
  }
}

TEST(DataFileRoles, EveryRoleRoundTripsThroughAFile) {
  test::TempDir dir;
  const auto probes = every_role();
  {
    auto w = DataFileWriter::create(dir.file("u.data"), app_meta(), probes);
    ASSERT_TRUE(w) << w.error().message;
    ASSERT_TRUE(w->finish(Trailer{.counts = std::vector<ProbeCount>(probes.size())}));
  }
  std::ifstream in(dir.file("u.data"), std::ios::binary);
  char header[kHeaderSize];
  in.read(header, sizeof header);
  uint16_t minor = 0;
  std::memcpy(&minor, header + 10, 2);
  EXPECT_EQ(minor, kDataMinor);  // 1.6 and later
  auto r = DataFileReader::open(dir.file("u.data"));
  ASSERT_TRUE(r) << r.error().message;
  expect_places(r->probes(), probes);
}

TEST(DataFileRoles, AnUnknownRoleIsAnError) {
  std::string bytes = encode_probes({probe(0, ProbeKind::Entry, "add", "add", RowRole::Entry, "add")});
  // The payload ends with the role, the row (03 'add'), the capture byte (1.9) and the
  // value count (00).
  const std::size_t role_at = bytes.size() - 7;
  ASSERT_EQ(bytes[role_at], static_cast<char>(RowRole::Entry));
  bytes[role_at] = 42;
  ByteReader r(std::as_bytes(std::span(bytes.data(), bytes.size())));
  auto back = decode_probes(r);
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().message, "PROBES at payload byte " + std::to_string(role_at + 5) + ": bad probe role");
}

TEST(DataFileRoles, EveryRoleHasItsOwnName) {
  std::set<std::string_view> names;
  for (uint8_t i = 0; i <= kLastRowRole; i++) names.insert(to_string(static_cast<RowRole>(i)));
  EXPECT_EQ(names.size(), kLastRowRole + 1u);
  EXPECT_EQ(to_string(RowRole::UsdtStart), "usdt-start");
  EXPECT_EQ(to_string(RowRole::Instruction), "instruction");
  EXPECT_EQ(to_string(static_cast<RowRole>(kLastRowRole + 1)), "?");
}

// A PROBES payload as uprof 1.5 wrote it: no role, no row.
std::string probes_1_5(const std::vector<ProbeInfo>& probes) {
  std::string out;
  put_varint(out, probes.size());
  for (const ProbeInfo& p : probes) {
    put_varint(out, p.index);
    out.push_back(static_cast<char>(static_cast<uint8_t>(p.kind) | (p.usdt ? 0x20 : 0) | (p.site ? 0x10 : 0)));
    for (const std::string* s : {&p.spec, &p.path, &p.build_id, &p.function, &p.symbol}) put_string(out, *s);
    put_varint(out, p.file_offset);
    put_varint(out, p.vaddr);
    put_varint(out, p.offset_in_function);
    if (p.usdt) put_varint(out, p.pair_key);
    put_varint(out, 0);  // no values
  }
  return out;
}

void put_section(std::string& file, SectionKind kind, const std::string& payload) {
  const uint32_t k = static_cast<uint32_t>(kind), crc = crc32_update(0, payload.data(), payload.size());
  const uint64_t n = payload.size();
  file.append(reinterpret_cast<const char*>(&k), 4);
  file.append(reinterpret_cast<const char*>(&crc), 4);
  file.append(reinterpret_cast<const char*>(&n), 8);
  file += payload;
}

TEST(DataFileRoles, AFileOfFormat15ReadsWithoutRoles) {
  std::vector<ProbeInfo> probes = every_role();
  for (ProbeInfo& p : probes) p.values.clear();
  std::string file(kDataMagic, sizeof kDataMagic);
  const uint16_t version[2] = {1, 5};
  file.append(reinterpret_cast<const char*>(version), 4);
  file += std::string{1, 1, 0, 0};  // x86-64, CLOCK_MONOTONIC, reserved
  put_section(file, SectionKind::Meta, encode_meta(app_meta()));
  put_section(file, SectionKind::Probes, probes_1_5(probes));
  put_section(file, SectionKind::Trailer, encode_trailer(Trailer{.counts = std::vector<ProbeCount>(probes.size())}));
  test::TempDir dir;
  std::ofstream(dir.file("old.data"), std::ios::binary) << file;

  auto r = DataFileReader::open(dir.file("old.data"));
  ASSERT_TRUE(r) << r.error().message;
  std::vector<ProbeInfo> want = probes;
  for (ProbeInfo& p : want) {
    p.role = RowRole::Unrecorded;
    p.row.clear();
  }
  expect_places(r->probes(), want);
  Event e;
  EXPECT_FALSE(r->next(e));
  EXPECT_TRUE(r->trailer());
  EXPECT_TRUE(r->problems().empty());
}

}  // namespace
}  // namespace uprof
