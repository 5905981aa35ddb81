#include "uprof/attach/ring_buffer.h"

#include <gtest/gtest.h>

#include <type_traits>
#include <vector>

#include "attach/fake_ring.h"
#include "drain/record_builder.h"
#include "uprof/drain/record_decoder.h"

namespace uprof {
namespace {

static_assert(!std::is_copy_constructible_v<RingBuffer>);
static_assert(!std::is_copy_assignable_v<RingBuffer>);
static_assert(std::is_move_constructible_v<RingBuffer>);

RingBuffer make_ring(std::size_t data_pages = 1) {
  auto rb = RingBuffer::adopt(test::anonymous_ring(data_pages));
  if (!rb.ok()) throw std::runtime_error(rb.error().message);
  return std::move(rb).value();
}

// Collects the ids of drained samples (their first field).
struct Collector {
  std::vector<uint64_t> ids;
  RingBuffer::RecordFn fn() {
    return [this](std::span<const std::byte> rec) -> Status {
      auto id = record_identifier(rec);
      if (!id.ok()) return std::move(id).take_error();
      ids.push_back(id->value_or(0));
      return ok();
    };
  }
};

TEST(RingBuffer, DrainsInOrderAndPublishesTheTail) {
  RingBuffer rb = make_ring();
  test::FakeKernel k(rb);
  for (uint64_t id = 1; id <= 5; ++id) ASSERT_TRUE(k.write(test::sample_record(id, 1, 1, id)));
  EXPECT_EQ(rb.pending_bytes(), 5 * 32u);
  Collector c;
  auto st = rb.drain(c.fn());
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(st->records, 5u);
  EXPECT_EQ(st->bytes, 160u);
  EXPECT_EQ(c.ids, (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(k.tail(), k.head());
  EXPECT_EQ(rb.pending_bytes(), 0u);
  // Nothing is handed out twice.
  auto again = rb.drain(c.fn());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->records, 0u);
  EXPECT_EQ(c.ids.size(), 5u);
}

TEST(RingBuffer, WrappedRecordIsCopiedWhole) {
  RingBuffer rb = make_ring();
  test::FakeKernel k(rb);
  const std::size_t size = rb.data_size();
  // Fill to 16 bytes short of the end, drain, then write a 56-byte record with
  // registers: 16 bytes at the end of the buffer, 40 at its start.
  // size - 16 = 48 + 32 * n: one record with a register, then plain ones.
  Collector c;
  const std::array<uint64_t, 1> one{5};
  ASSERT_TRUE(k.write(test::sample_record(99, 1, 1, 1, one)));
  for (std::size_t i = 0; i < (size - 16 - 48) / 32; ++i)
    ASSERT_TRUE(k.write(test::sample_record(100 + i, 1, 1, 1)));
  ASSERT_TRUE(rb.drain(c.fn()).ok());
  ASSERT_EQ(k.head() % size, size - 16);
  const std::array<uint64_t, 2> regs{0x1111, 0x2222};
  auto rec = test::sample_record(7, 8, 9, 10, regs);
  ASSERT_EQ(rec.size(), 56u);
  ASSERT_TRUE(k.write(rec));
  std::vector<Sample> got;
  SampleFormat f{.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                PERF_SAMPLE_REGS_USER,
                 .regs_mask = 0x3};
  auto st = rb.drain([&](std::span<const std::byte> r) -> Status {
    auto s = decode_sample(r, f);
    if (!s.ok()) return std::move(s).take_error();
    got.push_back(*s);
    return ok();
  });
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(st->wrapped, 1u);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, 7u);
  EXPECT_EQ(got[0].tid, 9u);
  EXPECT_EQ(got[0].reg(0), 0x1111u);
  EXPECT_EQ(got[0].reg(1), 0x2222u);
  EXPECT_EQ(k.tail(), k.head());
}

TEST(RingBuffer, HeadIsReadOncePerPass) {
  // Records the kernel writes while a pass runs wait for the next pass: each pass
  // ends exactly at the head it started with.
  RingBuffer rb = make_ring();
  test::FakeKernel k(rb);
  ASSERT_TRUE(k.write(test::sample_record(1, 1, 1, 1)));
  ASSERT_TRUE(k.write(test::sample_record(2, 1, 1, 1)));
  uint64_t head_at_start = k.head();
  std::vector<uint64_t> ids;
  auto st = rb.drain([&](std::span<const std::byte> r) -> Status {
    ids.push_back(**record_identifier(r));
    k.write(test::sample_record(100 + ids.size(), 1, 1, 1));
    return ok();
  });
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(k.tail(), head_at_start);
  Collector c;
  ASSERT_TRUE(rb.drain(c.fn()).ok());
  EXPECT_EQ(c.ids, (std::vector<uint64_t>{101, 102}));
}

TEST(RingBuffer, CallbackErrorConsumesOnlyWhatWasAccepted) {
  RingBuffer rb = make_ring();
  test::FakeKernel k(rb);
  for (uint64_t id = 1; id <= 3; ++id) ASSERT_TRUE(k.write(test::sample_record(id, 1, 1, 1)));
  int calls = 0;
  auto st = rb.drain([&](std::span<const std::byte>) -> Status {
    if (++calls == 2) return err("sink full");
    return ok();
  });
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message, "sink full");
  EXPECT_EQ(k.tail(), 32u);  // record 1 consumed, record 2 not
  Collector c;
  ASSERT_TRUE(rb.drain(c.fn()).ok());
  EXPECT_EQ(c.ids, (std::vector<uint64_t>{2, 3}));
}

TEST(RingBuffer, ImpossibleHeaderIsAnErrorWithItsPosition) {
  RingBuffer rb = make_ring();
  test::FakeKernel k(rb);
  ASSERT_TRUE(k.write(test::sample_record(1, 1, 1, 1)));
  std::vector<std::byte> zero_size(16, std::byte{0});
  ASSERT_TRUE(k.write(zero_size));
  Collector c;
  auto st = rb.drain(c.fn());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("position 32"), std::string::npos) << st.error().message;
  EXPECT_NE(st.error().message.find("size 0"), std::string::npos) << st.error().message;
  EXPECT_EQ(c.ids.size(), 1u);
  EXPECT_EQ(k.tail(), 32u);  // the good record is consumed, the bad one is not
}

TEST(RingBuffer, RecordRunningPastTheHead) {
  RingBuffer rb = make_ring();
  test::FakeKernel k(rb);
  auto rec = test::sample_record(1, 1, 1, 1);
  uint16_t big = 64;
  std::memcpy(rec.data() + 6, &big, 2);
  ASSERT_TRUE(k.write(rec));
  auto st = rb.drain([](std::span<const std::byte>) { return ok(); });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("has size 64 but 32 bytes remain"), std::string::npos)
      << st.error().message;
}

TEST(RingBuffer, HeadFurtherThanTheBufferIsRefused) {
  RingBuffer rb = make_ring();
  rb.metadata()->data_head = rb.data_size() + 8;
  auto st = rb.drain([](std::span<const std::byte>) { return ok(); });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("more than the"), std::string::npos) << st.error().message;
}

TEST(RingBuffer, AdoptChecksTheLayout) {
  EXPECT_TRUE(RingBuffer::adopt(test::anonymous_ring(2)).ok());
  auto three = RingBuffer::adopt(test::anonymous_ring(3));
  ASSERT_FALSE(three.ok());
  EXPECT_NE(three.error().message.find("1 + 2^n pages"), std::string::npos);
  EXPECT_FALSE(RingBuffer::adopt(UniqueMmap()).ok());
  // Old kernels leave data_offset/data_size at 0: data starts at page 1.
  UniqueMmap m = test::anonymous_ring(4);
  auto* meta = static_cast<perf_event_mmap_page*>(m.get());
  meta->data_offset = 0;
  meta->data_size = 0;
  auto rb = RingBuffer::adopt(std::move(m), -1, 3);
  ASSERT_TRUE(rb.ok()) << rb.error().message;
  EXPECT_EQ(rb->data_size(), 4 * test::page_bytes());
  EXPECT_EQ(rb->cpu(), 3);
}

TEST(RingBuffer, MapRefusesNonPowerOfTwo) {
  auto rb = RingBuffer::map(-1, 3, 0);
  ASSERT_FALSE(rb.ok());
  EXPECT_NE(rb.error().message.find("power of two"), std::string::npos);
}

TEST(RingBuffer, ManyPassesOverAFullBuffer) {
  // Fill and drain repeatedly so the head wraps many times: every record comes out
  // exactly once, in order.
  RingBuffer rb = make_ring();
  test::FakeKernel k(rb);
  uint64_t next = 0, expect = 0;
  bool in_order = true;
  auto fn = [&](std::span<const std::byte> r) -> Status {
    in_order = in_order && **record_identifier(r) == expect++;
    return ok();
  };
  for (int round = 0; round < 50; ++round) {
    const std::array<uint64_t, 1> regs{1};
    while (k.write(next % 3 ? test::sample_record(next, 1, 1, 1)
                            : test::sample_record(next, 1, 1, 1, regs)))
      ++next;
    ASSERT_TRUE(rb.drain(fn).ok());
  }
  EXPECT_TRUE(in_order);
  EXPECT_EQ(expect, next);
  EXPECT_GT(k.head(), 40 * rb.data_size());
}

}  // namespace
}  // namespace uprof
