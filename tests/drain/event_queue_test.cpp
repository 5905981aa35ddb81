#include "uprof/drain/event_queue.h"

#include <gtest/gtest.h>

#include "uprof/model/string_value.h"

namespace uprof {
namespace {

TEST(EventQueue, EveryFieldComesBackAsItWent) {
  ChunkPool pool;
  EventQueue q(pool);
  Event s;
  s.kind = EventKind::Sample;
  s.probe = 3;
  s.pid = 10;
  s.tid = 11;
  s.time = 12345;
  s.nvalues = 3;
  s.values[0] = 1;
  s.values[1] = ~uint64_t{0};
  s.missing = 0b100;
  s.frame = 0x7ffd0000;
  s.goroutine = 0xc000102340;  // a Go function's sample
  put_string_value(s, 2, "key17", true);
  Event c;
  c.kind = EventKind::Comm;
  c.pid = c.tid = 10;
  c.time = 12346;
  c.comm = "worker";
  Event l;
  l.kind = EventKind::Lost;
  l.probe = UINT32_MAX;
  l.lost = 77;
  l.time = 12347;
  q.push(s);
  q.push(c);
  q.push(l);
  EXPECT_EQ(q.size(), 3u);
  EXPECT_EQ(q.front_time(), 12345u);

  Event out;
  q.pop(out);
  EXPECT_EQ(out.kind, EventKind::Sample);
  EXPECT_EQ(out.probe, 3u);
  EXPECT_EQ(out.pid, 10u);
  EXPECT_EQ(out.tid, 11u);
  EXPECT_EQ(out.time, 12345u);
  EXPECT_EQ(out.nvalues, 3);
  EXPECT_EQ(out.values[0], 1u);
  EXPECT_EQ(out.values[1], ~uint64_t{0});
  EXPECT_EQ(out.missing, 0b100u);
  EXPECT_EQ(out.frame, 0x7ffd0000u);
  EXPECT_EQ(out.goroutine, 0xc000102340u);
  EXPECT_EQ(out.lost, 0u);
  auto str = string_value(out, 2);
  EXPECT_EQ(str.bytes, "key17");
  EXPECT_TRUE(str.cut);
  // The same Event again: what the sample had and the Comm has not is gone.
  q.pop(out);
  EXPECT_EQ(out.kind, EventKind::Comm);
  EXPECT_EQ(out.comm, "worker");
  EXPECT_EQ(out.nvalues, 0);
  EXPECT_EQ(out.values[0], 0u);
  EXPECT_EQ(out.values[1], 0u);
  EXPECT_TRUE(out.text.empty());
  EXPECT_EQ(out.frame, 0u);
  EXPECT_EQ(out.goroutine, 0u);
  q.pop(out);
  EXPECT_EQ(out.kind, EventKind::Lost);
  EXPECT_EQ(out.probe, UINT32_MAX);
  EXPECT_EQ(out.lost, 77u);
  EXPECT_EQ(out.goroutine, 0u);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(pool.in_use(), 0u);
}

// Format 1.9: a sample's stack and off-CPU totals, and an Object event, come back whole;
// a sample after them keeps nothing of theirs.
TEST(EventQueue, StacksOffCpuTimesAndObjectsComeBack) {
  ChunkPool pool;
  EventQueue q(pool);
  Event o;
  o.kind = EventKind::Object;
  o.time = 1;
  o.object = 4;
  o.path = std::string(300, 'p');  // longer than a thread's name
  o.build_id = "abcdef0123";
  Event s;
  s.kind = EventKind::Sample;
  s.probe = 2;
  s.time = 2;
  s.nvalues = 1;
  s.values[0] = 9;
  s.stack = {{4, 0x1234}, {0, 0x7fff0000}, {4, 0x99}};
  s.offcpu = {1, 2, 3, 4, 5, 6};
  put_string_value(s, 0, "x", false);
  Event plain;
  plain.kind = EventKind::Sample;
  plain.probe = 1;
  plain.time = 3;
  q.push(o);
  q.push(s);
  q.push(plain);
  Event out;
  q.pop(out);
  EXPECT_EQ(out.kind, EventKind::Object);
  EXPECT_EQ(out.object, 4u);
  EXPECT_EQ(out.probe, 0u);
  EXPECT_EQ(out.path, o.path);
  EXPECT_EQ(out.build_id, "abcdef0123");
  EXPECT_TRUE(out.comm.empty());
  q.pop(out);
  EXPECT_EQ(out.kind, EventKind::Sample);
  EXPECT_EQ(out.probe, 2u);
  EXPECT_EQ(out.object, 0u);
  EXPECT_EQ(out.stack, s.stack);
  EXPECT_EQ(out.offcpu, s.offcpu);
  EXPECT_EQ(string_value(out, 0).bytes, "x");
  EXPECT_TRUE(out.path.empty());
  EXPECT_TRUE(out.build_id.empty());
  q.pop(out);
  EXPECT_EQ(out.probe, 1u);
  EXPECT_TRUE(out.stack.empty());
  EXPECT_EQ(out.offcpu, OffCpuTimes{});
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(pool.in_use(), 0u);
}

// A sample with two values takes 72 bytes, not the ~370 of an Event; the chunks go
// back to the pool as they empty.
TEST(EventQueue, HoldsEventsCompactlyAndGivesMemoryBack) {
  ChunkPool pool;
  EventQueue q(pool);
  Event e;
  e.nvalues = 2;
  for (uint64_t i = 0; i < 100000; i++) {
    e.time = i;
    e.values[0] = i;
    q.push(e);
  }
  // Whole events per chunk: 16 KiB holds 227 of them.
  const uint64_t per_chunk = ChunkPool::kChunkBytes / 72;
  EXPECT_EQ(pool.in_use(), (100000u + per_chunk - 1) / per_chunk * ChunkPool::kChunkBytes);
  Event out;
  for (uint64_t i = 0; i < 100000; i++) {
    ASSERT_EQ(q.front_time(), i);
    q.pop(out);
    ASSERT_EQ(out.values[0], i);
  }
  EXPECT_EQ(pool.in_use(), 0u);
  EXPECT_GE(pool.peak(), 100000u * 72);
}

// An event larger than a chunk (strings) gets a chunk of its own size.
TEST(EventQueue, AnEventLargerThanAChunk) {
  ChunkPool pool;
  EventQueue q(pool);
  Event big;
  big.nvalues = 1;
  put_string_value(big, 0, std::string(ChunkPool::kChunkBytes + 100, 'x'), false);
  q.push(big);
  Event out;
  q.pop(out);
  EXPECT_EQ(string_value(out, 0).bytes.size(), ChunkPool::kChunkBytes + 100);
  EXPECT_EQ(pool.in_use(), 0u);
}

}  // namespace
}  // namespace uprof
