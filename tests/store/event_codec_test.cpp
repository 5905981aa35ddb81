// The EVENTS codec on its own, without a file: every event kind through encode_event
// and back, the bytes of one sample, and damaged input naming the byte it broke at.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "analyse/event_builders.h"  // the hand-built events of the analyse tests
#include "uprof/store/data_file.h"

namespace uprof {
namespace {

using test::comm_event;
using test::exit_event;
using test::fork_event;
using test::lost;

// Probe 0: an entry probe with three values; probe 1: a return probe with $retval.
std::vector<ProbeInfo> probes() {
  return {test::probe(0, ProbeKind::Entry, "add", 0x1139, {"%di", "%si", "%dx"}),
          test::probe(1, ProbeKind::Return, "add", 0x1139, {"$retval"})};
}

// A sample of thread 41 in process 40.
Event sample(uint32_t probe, uint64_t time, std::initializer_list<uint64_t> values) {
  return test::sample(probe, 41, time, values, 40);
}

ByteReader reader_of(const std::string& s) { return ByteReader(s.data(), s.size()); }

void expect_same(const Event& a, const Event& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.probe, b.probe);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.tid, b.tid);
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.nvalues, b.nvalues);
  for (int i = 0; i < a.nvalues; i++) EXPECT_EQ(a.values[i], b.values[i]) << "value " << i;
  EXPECT_EQ(a.missing, b.missing);
  EXPECT_EQ(a.lost, b.lost);
  EXPECT_EQ(a.lost_until, b.lost_until);
  EXPECT_EQ(a.comm, b.comm);
}

// One of each kind, with times that go back as well as forward (samples of other CPUs).
std::vector<Event> every_kind() {
  std::vector<Event> ev;
  ev.push_back(comm_event(40, 41, "mytest", 1000));
  ev.push_back(sample(0, 1100, {7, static_cast<uint64_t>(-1), UINT64_MAX}));
  Event partial = sample(0, 1150, {0, 5, 0});
  partial.missing = 0b101;
  ev.push_back(partial);
  ev.push_back(sample(1, 1120, {0x7fffffffffffffffull}));  // a return, older than the event before
  ev.push_back(fork_event(50, 50, 40, 41, 1200));
  ev.push_back(lost(1300, 12, 1));
  ev.push_back(lost(1300, 1, UINT32_MAX));
  ev.push_back(test::thread_lost(41, 1310, 4, 40));  // one thread's (1.7)
  ev.push_back(test::gap_lost(1320, 1390, 2));       // any thread's, in a gap (1.7)
  ev.push_back(exit_event(51, 1400, 50));
  return ev;
}

TEST(EventCodec, EveryKindRoundTrips) {
  const auto events = every_kind();
  EventCodecState enc = event_codec_state(probes(), 900);
  std::string bytes;
  for (const auto& e : events) encode_event(e, enc, bytes);
  EXPECT_EQ(enc.time, 1400u);

  ByteReader r = reader_of(bytes);
  EventCodecState dec = event_codec_state(probes(), 900);
  for (const auto& want : events) {
    Event got;
    auto st = decode_event(r, dec, got);
    ASSERT_TRUE(st) << st.error().message;
    expect_same(want, got);
  }
  EXPECT_TRUE(r.at_end());
}

TEST(EventCodec, ASampleIsItsDocumentedBytes) {
  // data_file.h: 1 sample  z dt, v probe, v tid, z (pid - tid), probe.nvalues x z value
  EventCodecState s = event_codec_state(probes(), 1000);
  std::string bytes;
  encode_event(sample(0, 1100, {7, static_cast<uint64_t>(-1), 64}), s, bytes);
  EXPECT_EQ(bytes, std::string("\x01\xc8\x01\x00\x29\x01\x0e\x01\x80\x01", 10));
  // A partial sample: kind 6, then the mask of missing values before the values.
  Event partial = sample(1, 1090, {0});
  partial.missing = 1;
  bytes.clear();
  encode_event(partial, s, bytes);
  EXPECT_EQ(bytes, std::string("\x06\x13\x01\x29\x01\x01\x00", 7));
}

// An exit probe's samples end with the stack pointer (format 1.2), and its kind and
// flags survive the probe table.
TEST(EventCodec, ExitProbesAndTheStackPointerOfTheirSamplesRoundTrip) {
  std::vector<ProbeInfo> table = probes();
  table[0].frame = true;
  table.push_back(test::probe(2, ProbeKind::Exit, "add", 0x1150, {"%ax"}, 0x17));
  table.back().frame = true;
  table.back().tail_call = true;
  std::string encoded = encode_probes(table);
  ByteReader pr = reader_of(encoded);
  auto back = decode_probes(pr);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->size(), 3u);
  EXPECT_TRUE((*back)[0].frame);
  EXPECT_FALSE((*back)[1].frame);
  EXPECT_EQ((*back)[2].kind, ProbeKind::Exit);
  EXPECT_TRUE((*back)[2].frame);
  EXPECT_TRUE((*back)[2].tail_call);
  EXPECT_FALSE((*back)[0].tail_call);

  Event entry = sample(0, 10, {1, 2, 3});
  entry.frame = 0x7ffc12345678;
  Event ret = sample(1, 20, {5});  // a return probe's sample: no stack pointer stored
  ret.frame = 99;
  Event exit = sample(2, 30, {9});
  exit.frame = 0x7ffc12345678;
  EventCodecState enc = event_codec_state(*back, 0);
  std::string bytes;
  for (const Event* e : {&entry, &ret, &exit}) encode_event(*e, enc, bytes);
  ByteReader r = reader_of(bytes);
  EventCodecState dec = event_codec_state(*back, 0);
  std::vector<uint64_t> frames;
  for (int i = 0; i < 3; i++) {
    Event got;
    ASSERT_TRUE(decode_event(r, dec, got));
    frames.push_back(got.frame);
  }
  EXPECT_EQ(frames, (std::vector<uint64_t>{0x7ffc12345678, 0, 0x7ffc12345678}));
  EXPECT_TRUE(r.at_end());
}

// Format 1.8: a Go function's samples end with the stack pointer, then the goroutine's g.
TEST(EventCodec, TheGoroutineOfAGoFunctionsSamplesRoundTrips) {
  std::vector<ProbeInfo> table = probes();
  for (auto& p : table) p.frame = p.goroutine = p.kind != ProbeKind::Return;
  table.push_back(test::probe(2, ProbeKind::Exit, "main.work", 0x1150, {"$retval"}, 0x17));
  table.back().frame = table.back().goroutine = true;
  const std::string encoded = encode_probes(table);
  ByteReader pr = reader_of(encoded);
  auto back = decode_probes(pr);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->size(), 3u);
  EXPECT_TRUE((*back)[0].goroutine);
  EXPECT_FALSE((*back)[1].goroutine);
  EXPECT_TRUE((*back)[2].goroutine);
  EXPECT_EQ((*back)[2].kind, ProbeKind::Exit);

  Event entry = sample(0, 10, {1, 2, 3});
  entry.frame = 0xc000100000;
  entry.goroutine = 0xc000007860;
  Event ret = sample(1, 20, {5});  // not a goroutine probe: nothing stored
  ret.goroutine = 99;
  Event exit = sample(2, 30, {9});
  exit.frame = 0xc000200000;  // the stack moved
  exit.goroutine = 0xc000007860;
  EventCodecState enc = event_codec_state(*back, 0);
  std::string bytes;
  for (const Event* e : {&entry, &ret, &exit}) encode_event(*e, enc, bytes);
  ByteReader r = reader_of(bytes);
  EventCodecState dec = event_codec_state(*back, 0);
  std::vector<uint64_t> gs, frames;
  for (int i = 0; i < 3; i++) {
    Event got;
    ASSERT_TRUE(decode_event(r, dec, got));
    gs.push_back(got.goroutine);
    frames.push_back(got.frame);
  }
  EXPECT_EQ(gs, (std::vector<uint64_t>{0xc000007860, 0, 0xc000007860}));
  EXPECT_EQ(frames, (std::vector<uint64_t>{0xc000100000, 0, 0xc000200000}));
  EXPECT_TRUE(r.at_end());
}

// Format 1.9: a -g probe's samples carry their callers as (object, offset) frames, an
// --off-cpu probe's its thread's off-CPU totals; Object events name the frames' files.
TEST(EventCodec, StacksOffCpuTimesAndObjectsRoundTrip) {
  std::vector<ProbeInfo> table = probes();
  table[0].stack = true;
  table[0].offcpu = table[1].offcpu = true;
  const std::string encoded = encode_probes(table);
  ByteReader pr = reader_of(encoded);
  auto back = decode_probes(pr);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE((*back)[0].stack);
  EXPECT_FALSE((*back)[1].stack);
  EXPECT_TRUE((*back)[0].offcpu);
  EXPECT_TRUE((*back)[1].offcpu);

  Event object;
  object.kind = EventKind::Object;
  object.time = 5;
  object.object = 1;
  object.path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  object.build_id = "0123abcd";
  Event entry = sample(0, 10, {1, 2, 3});
  entry.stack = {{1, 0x29d90}, {0, 0x7f0000001000}, {1, 0x29e40}};
  entry.offcpu = {100, 200, 0, 300, 0, 7};
  Event ret = sample(1, 20, {5});
  ret.stack = {{1, 4}};  // not a -g probe: nothing stored
  ret.offcpu = {150, 200, 0, 900, 0, 7};
  EventCodecState enc = event_codec_state(*back, 0);
  std::string bytes;
  for (const Event* e : {&object, &entry, &ret}) encode_event(*e, enc, bytes);
  ByteReader r = reader_of(bytes);
  EventCodecState dec = event_codec_state(*back, 0);
  Event got;
  ASSERT_TRUE(decode_event(r, dec, got));
  EXPECT_EQ(got.kind, EventKind::Object);
  EXPECT_EQ(got.object, 1u);
  EXPECT_EQ(got.path, object.path);
  EXPECT_EQ(got.build_id, "0123abcd");
  ASSERT_TRUE(decode_event(r, dec, got));
  EXPECT_EQ(got.stack, entry.stack);
  EXPECT_EQ(got.offcpu, entry.offcpu);
  ASSERT_TRUE(decode_event(r, dec, got));  // the same Event, reused
  EXPECT_TRUE(got.stack.empty());
  EXPECT_EQ(got.offcpu, ret.offcpu);
  EXPECT_TRUE(r.at_end());
}

TEST(EventCodec, ADamagedStackIsNamedNotBelieved) {
  std::vector<ProbeInfo> table = probes();
  table[0].stack = true;
  Event entry = sample(0, 10, {1, 2, 3});
  entry.stack = {{1, 0x1000}, {1, 0x2000}};
  EventCodecState enc = event_codec_state(table, 0);
  std::string bytes;
  encode_event(entry, enc, bytes);
  // Cut inside the frames: an error naming the byte, never a frame made up.
  for (std::size_t cut = 1; cut < bytes.size(); cut++) {
    const std::string part = bytes.substr(0, cut);  // the reader keeps a view of it
    ByteReader r = reader_of(part);
    EventCodecState dec = event_codec_state(table, 0);
    Event got;
    auto st = decode_event(r, dec, got);
    EXPECT_FALSE(st.ok()) << cut;
    if (!st.ok()) {
      EXPECT_NE(st.error().message.find("EVENTS at payload byte"), std::string::npos);
    }
  }
}

// Format 1.3: a string value (its memory reads with it) and a raw memory read go
// through the PROBES section; a sample's string is stored as its bytes and read back
// as an id of the pool, which gives the bytes (and whether they were cut) back.
TEST(EventCodec, StringsAndMemoryReadsRoundTrip) {
  std::vector<ProbeInfo> table = {test::probe(0, ProbeKind::Entry, "visit", 0x1139, {"label", "%si"})};
  ValueSpec& label = table[0].values[0];
  label.hops = {24, -8};
  label.deref = true;
  label.deref_offset = 4;
  label.kind = ValueKind::String;
  label.type = "string";
  label.string_max = 32;
  ValueSpec& weight = table[0].values[1];
  weight.deref = true;
  weight.deref_offset = 32;
  std::string encoded = encode_probes(table);
  ByteReader pr = reader_of(encoded);
  auto back = decode_probes(pr);
  ASSERT_TRUE(back.ok()) << back.error().message;
  const ValueSpec& l = (*back)[0].values[0];
  EXPECT_TRUE(l.is_string());
  EXPECT_EQ(l.hops, (std::vector<int32_t>{24, -8}));
  EXPECT_TRUE(l.deref);
  EXPECT_EQ(l.deref_offset, 4);
  EXPECT_EQ(l.string_max, 32);
  const ValueSpec& w = (*back)[0].values[1];
  EXPECT_FALSE(w.is_string());
  EXPECT_TRUE(w.deref);
  EXPECT_EQ(w.deref_offset, 32);

  Event a = sample(0, 10, {0, 7});
  put_string_value(a, 0, "blue \"q\"", false);
  Event b = sample(0, 20, {0, 8});
  put_string_value(b, 0, "xxxxxxxx", true);
  Event c = sample(0, 30, {0, 9});
  c.missing = 1;  // an unreadable pointer
  Event d = sample(0, 40, {0, 7});
  put_string_value(d, 0, "blue \"q\"", false);
  EventCodecState enc = event_codec_state(*back, 0);
  std::string bytes;
  for (const Event* e : {&a, &b, &c, &d}) encode_event(*e, enc, bytes);
  StringPool pool;
  EventCodecState dec = event_codec_state(*back, 0);
  dec.pool = &pool;
  ByteReader r = reader_of(bytes);
  std::vector<Event> got(4);
  for (auto& e : got) ASSERT_TRUE(decode_event(r, dec, e));
  EXPECT_TRUE(r.at_end());
  EXPECT_EQ(pool.text(got[0].values[0]).bytes, "blue \"q\"");
  EXPECT_FALSE(pool.text(got[0].values[0]).cut);
  EXPECT_EQ(pool.text(got[1].values[0]).bytes, "xxxxxxxx");
  EXPECT_TRUE(pool.text(got[1].values[0]).cut);
  EXPECT_EQ(got[2].missing, 1u);
  EXPECT_EQ(got[3].values[0], got[0].values[0]);  // the same string, the same id
  EXPECT_EQ(got[3].values[1], 7u);
  EXPECT_EQ(pool.size(), 2u);
}

TEST(EventCodec, SamplesHoldAsManyValuesAsTheirProbe) {
  // The file stores no count per sample: the probe table says how many.
  EventCodecState enc = event_codec_state(probes(), 0);
  std::string bytes;
  encode_event(sample(0, 10, {1}), enc, bytes);        // fewer than the probe's 3: padded with 0
  encode_event(sample(1, 20, {2, 3, 4}), enc, bytes);  // more than the probe's 1: cut
  ByteReader r = reader_of(bytes);
  EventCodecState dec = event_codec_state(probes(), 0);
  Event a, b;
  ASSERT_TRUE(decode_event(r, dec, a));
  ASSERT_TRUE(decode_event(r, dec, b));
  EXPECT_EQ(a.nvalues, 3);
  EXPECT_EQ(a.values[0], 1u);
  EXPECT_EQ(a.values[1], 0u);
  EXPECT_EQ(b.nvalues, 1);
  EXPECT_EQ(b.values[0], 2u);
}

TEST(EventCodec, AReusedEventKeepsNothingOfTheOneBefore) {
  // The reader decodes every event into the same Event: a sample after a comm has no
  // name, a lost record after a sample no pid or values.
  EventCodecState enc = event_codec_state(probes(), 0);
  std::string bytes;
  Event partial = sample(0, 6, {1, 2, 3});
  partial.missing = 2;
  for (const Event& e : {comm_event(40, 41, "mytest", 5), partial, lost(7, 9, 0), sample(1, 8, {4})})
    encode_event(e, enc, bytes);
  ByteReader r = reader_of(bytes);
  EventCodecState dec = event_codec_state(probes(), 0);
  Event e;
  ASSERT_TRUE(decode_event(r, dec, e));
  EXPECT_EQ(e.comm, "mytest");
  ASSERT_TRUE(decode_event(r, dec, e));
  EXPECT_EQ(e.comm, "");
  EXPECT_EQ(e.missing, 2u);
  ASSERT_TRUE(decode_event(r, dec, e));
  EXPECT_EQ(e.kind, EventKind::Lost);
  EXPECT_EQ(e.pid, 0u);
  EXPECT_EQ(e.tid, 0u);
  EXPECT_EQ(e.nvalues, 0);
  EXPECT_EQ(e.lost, 9u);
  EXPECT_EQ(e.lost_until, 0u);
  ASSERT_TRUE(decode_event(r, dec, e));
  EXPECT_EQ(e.lost, 0u);
  EXPECT_EQ(e.missing, 0u);
  EXPECT_EQ(e.nvalues, 1);
}

TEST(EventCodec, EveryCutIsAnErrorNamingTheByte) {
  std::string bytes;
  EventCodecState enc = event_codec_state(probes(), 900);
  std::vector<std::size_t> ends;  // where each event's bytes end
  for (const auto& e : every_kind()) {
    encode_event(e, enc, bytes);
    ends.push_back(bytes.size());
  }
  for (std::size_t cut = 0; cut < bytes.size(); cut++) {
    std::string part = bytes.substr(0, cut);
    ByteReader r = reader_of(part);
    EventCodecState dec = event_codec_state(probes(), 900);
    std::size_t whole = 0;
    Event e;
    while (whole < ends.size() && ends[whole] <= cut) {
      ASSERT_TRUE(decode_event(r, dec, e)) << "cut at " << cut;
      whole++;
    }
    auto broken = decode_event(r, dec, e);
    ASSERT_FALSE(broken) << "cut at " << cut;
    const std::string& m = broken.error().message;
    // The byte named is inside the broken event, at or before the cut.
    const std::string prefix = "EVENTS at payload byte ";
    ASSERT_EQ(m.rfind(prefix, 0), 0u) << m;
    std::size_t at = std::stoul(m.substr(prefix.size()));
    EXPECT_LE(at, cut) << m;
    EXPECT_GE(at, whole ? ends[whole - 1] : 0) << m;
  }
}

TEST(EventCodec, DamageIsNamedWithItsByte) {
  auto decode = [](const std::string& bytes) {
    ByteReader r = reader_of(bytes);
    EventCodecState s = event_codec_state(probes(), 0);
    Event e;
    auto st = decode_event(r, s, e);
    return st ? std::string("(decoded)") : st.error().message;
  };
  // Sample cut after its tid: kind, dt, probe, tid read; the pid delta is missing.
  EXPECT_EQ(decode(std::string("\x01\x02\x00\x29", 4)), "EVENTS at payload byte 4: truncated sample");
  EXPECT_EQ(decode(std::string("\x01\x02\x00\x29\x01\x02", 6)), "EVENTS at payload byte 6: truncated sample values");
  EXPECT_EQ(decode(std::string("\x09\x02", 2)), "EVENTS at payload byte 2: unknown event kind 9");
  EXPECT_EQ(decode(std::string("\x01\x02\x02\x29\x01", 5)), "EVENTS at payload byte 5: sample of an unknown probe");
  EXPECT_EQ(decode(std::string("\x03\x02\x28\x29\x05myte", 9)), "EVENTS at payload byte 5: truncated comm record");
  EXPECT_EQ(decode(std::string("\x05\x02\x28\x29\x28", 5)), "EVENTS at payload byte 5: truncated fork record");
  // A time delta of eleven varint bytes is more than 64 bits: not a number.
  EXPECT_EQ(decode("\x04" + std::string(10, '\xff') + "\x01"), "EVENTS at payload byte 11: truncated event");
  EXPECT_EQ(decode(""), "EVENTS at payload byte 0: truncated event");
}

TEST(EventCodec, ALostEventIsItsDocumentedBytes) {
  // data_file.h: 2 lost  z dt, v probe + 1, v lost: what files before 1.7 hold, and
  // still what a loss of any thread at one instant is written as.
  EventCodecState s = event_codec_state(probes(), 1000);
  std::string bytes;
  encode_event(lost(1010, 3, 1), s, bytes);
  EXPECT_EQ(bytes, std::string("\x02\x14\x02\x03", 4));
  // 7: as 2, then v tid, z (pid - tid), v the gap's length: thread 41 of process 40 ...
  bytes.clear();
  encode_event(test::thread_lost(41, 1020, 3, 40), s, bytes);
  EXPECT_EQ(bytes, std::string("\x07\x14\x00\x03\x29\x01\x00", 7));
  // ... or any thread (tid 0), from 1030 to 1130.
  bytes.clear();
  encode_event(test::gap_lost(1030, 1130, 3), s, bytes);
  EXPECT_EQ(bytes, std::string("\x07\x14\x00\x03\x00\x00\x64", 7));
}

TEST(EventCodec, LostOfAnUnknownProbeReadsAsUnknown) {
  // v probe + 1; 0 and anything past the table are "unknown" (UINT32_MAX).
  for (const auto& [bytes, want] : std::vector<std::pair<std::string, uint32_t>>{
           {std::string("\x02\x00\x00\x03", 4), UINT32_MAX},
           {std::string("\x02\x00\x02\x03", 4), 1u},
           {std::string("\x02\x00\x03\x03", 4), UINT32_MAX}}) {
    ByteReader r = reader_of(bytes);
    EventCodecState s = event_codec_state(probes(), 0);
    Event e;
    auto st = decode_event(r, s, e);
    ASSERT_TRUE(st) << st.error().message;
    EXPECT_EQ(e.kind, EventKind::Lost);
    EXPECT_EQ(e.probe, want);
    EXPECT_EQ(e.lost, 3u);
  }
}

}  // namespace
}  // namespace uprof
