// The BPF ring reader on a real BPF ring buffer: a tiny BPF program, run by the kernel
// through BPF_PROG_TEST_RUN, writes each record (its bpf_ktime_get_ns, twice) with
// bpf_ringbuf_output, as uprof's capture program does at each hit.
#include "uprof/drain/bpf_ring_reader.h"

#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>

#include <cstring>
#include <vector>

#include "support/test_support.h"

namespace uprof {
namespace {

bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  bpf_insn i{};
  i.code = code;
  i.dst_reg = dst & 0xf;
  i.src_reg = src & 0xf;
  i.off = off;
  i.imm = imm;
  return i;
}

// A 4 KiB ring and a program that writes one 16-byte record each time it runs.
struct KernelWriter {
  UniqueFd ring, prog;

  static KernelWriter make() {
    KernelWriter w;
    w.ring.reset(bpf_map_create(BPF_MAP_TYPE_RINGBUF, "uprof_t_ring", 0, 0, 4096, nullptr));
    EXPECT_TRUE(w.ring.valid()) << std::strerror(errno);
    const bpf_insn prog[] = {
        insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ktime_get_ns),
        insn(BPF_STX | BPF_MEM | BPF_DW, 10, 0, -16, 0),  // *(u64 *)(r10 - 16) = r0
        insn(BPF_STX | BPF_MEM | BPF_DW, 10, 0, -8, 0),   // *(u64 *)(r10 - 8) = r0
        insn(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, w.ring.get()),
        insn(0, 0, 0, 0, 0),
        insn(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),  // r2 = r10 - 16
        insn(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -16),
        insn(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 16),  // 16 bytes
        insn(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, 0),   // no flags
        insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_output),
        insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
        insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
    };
    w.prog.reset(bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "uprof_t_write", "GPL", prog,
                               sizeof prog / sizeof prog[0], nullptr));
    EXPECT_TRUE(w.prog.valid()) << std::strerror(errno);
    return w;
  }

  // Runs the program `n` times: n records, or fewer once the ring is full.
  void write(int n) const {
    char packet[64] = {};
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = packet, .data_size_in = sizeof packet, .repeat = n);
    ASSERT_EQ(bpf_prog_test_run_opts(prog.get(), &opts), 0) << std::strerror(errno);
  }
};

// The records a pass hands out: each one's time, checked whole (both copies equal).
std::vector<uint64_t> read_pass(BpfRingReader& r) {
  std::vector<uint64_t> times;
  r.begin_pass();
  while (auto rec = r.next()) {
    EXPECT_EQ(rec->size(), 16u);
    uint64_t a, b;
    std::memcpy(&a, rec->data(), 8);
    std::memcpy(&b, rec->data() + 8, 8);
    EXPECT_EQ(a, b);
    times.push_back(a);
  }
  return times;
}

TEST(BpfRingReader, ReadsWhatTheKernelWroteInOrderAcrossTheEnd) {
  UPROF_REQUIRE_ROOT();
  KernelWriter w = KernelWriter::make();
  auto reader = BpfRingReader::open(w.ring.get());
  ASSERT_TRUE(reader) << reader.error().message;
  EXPECT_EQ(reader->size(), 4096u);
  uint64_t last = 0, total = 0;
  // 24 bytes a record: the ring's end falls inside the 171st, which must read whole.
  for (int round = 0; round < 6; round++) {
    w.write(100);
    EXPECT_EQ(reader->pending(), 2400u);
    auto times = read_pass(*reader);
    ASSERT_EQ(times.size(), 100u) << "round " << round;
    for (uint64_t t : times) {
      EXPECT_GT(t, last);
      last = t;
    }
    total += times.size();
    reader->release();
    EXPECT_EQ(reader->unreleased(), 0u);
  }
  EXPECT_EQ(total, 600u);
}

TEST(BpfRingReader, APassEndsAtWhatItSawWhenItBegan) {
  UPROF_REQUIRE_ROOT();
  KernelWriter w = KernelWriter::make();
  auto reader = BpfRingReader::open(w.ring.get());
  ASSERT_TRUE(reader) << reader.error().message;
  w.write(10);
  reader->begin_pass();
  w.write(5);  // after the pass began: the next pass's
  int n = 0;
  while (reader->next()) n++;
  EXPECT_EQ(n, 10);
  EXPECT_EQ(reader->pending(), 5u * 24);
  EXPECT_EQ(read_pass(*reader).size(), 5u);
}

// Space not released stays the reader's: the kernel has no room and drops, however
// often it tries; released, it writes again.
TEST(BpfRingReader, UnreleasedSpaceFillsTheRingAndTheKernelDrops) {
  UPROF_REQUIRE_ROOT();
  KernelWriter w = KernelWriter::make();
  auto reader = BpfRingReader::open(w.ring.get());
  ASSERT_TRUE(reader) << reader.error().message;
  w.write(1000);
  EXPECT_EQ(read_pass(*reader).size(), 4096u / 24);
  w.write(1000);
  EXPECT_EQ(read_pass(*reader).size(), 0u);
  reader->release();
  w.write(3);
  EXPECT_EQ(read_pass(*reader).size(), 3u);
}

TEST(BpfRingReader, NotARingIsAnError) {
  UPROF_REQUIRE_ROOT();
  UniqueFd array(bpf_map_create(BPF_MAP_TYPE_ARRAY, "uprof_t_arr", 4, 8, 1, nullptr));
  ASSERT_TRUE(array.valid()) << std::strerror(errno);
  auto r = BpfRingReader::open(array.get());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("not a ring buffer"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace uprof
