// RingReader on a real BPF ring buffer of one page, filled by a tiny
// program run with BPF_PROG_TEST_RUN: records that wrap around the end of
// the data pages (mapped once) read whole, and stay whole while held.
#include "run/ring_reader.h"

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "tests/e2e/e2e_support.h"

namespace e2e {
namespace {

using mt::RingReader;

constexpr int kWords = 25;  // 200 bytes: 208 with the kernel's header, so laps end mid-record

bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  bpf_insn i{};
  i.code = code;
  i.dst_reg = dst;
  i.src_reg = src;
  i.off = off;
  i.imm = imm;
  return i;
}

// A raw tracepoint program writing one record to the ring `map_fd`: word i
// is ctx[0] * 32 + i.
std::vector<bpf_insn> writer(int map_fd) {
  std::vector<bpf_insn> p;
  p.push_back(insn(BPF_LDX | BPF_MEM | BPF_DW, 7, 1, 0, 0));   // r7 = ctx[0]
  p.push_back(insn(BPF_ALU64 | BPF_LSH | BPF_K, 7, 0, 0, 5));  // r7 *= 32
  for (int i = 0; i < kWords; i++) {
    p.push_back(insn(BPF_ALU64 | BPF_MOV | BPF_X, 1, 7, 0, 0));  // r1 = r7 + i
    p.push_back(insn(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, i));
    p.push_back(insn(BPF_STX | BPF_MEM | BPF_DW, 10, 1, int16_t(-8 * kWords + 8 * i), 0));
  }
  p.push_back(insn(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map_fd));  // r1 = map
  p.push_back(insn(0, 0, 0, 0, 0));
  p.push_back(insn(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0));  // r2 = the record on the stack
  p.push_back(insn(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -8 * kWords));
  p.push_back(insn(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 8 * kWords));
  p.push_back(insn(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, 0));
  p.push_back(insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_output));
  p.push_back(insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0));
  p.push_back(insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  return p;
}

class RingReaderTest : public BpfTest {
 protected:
  void SetUp() override {
    BpfTest::SetUp();
    if (IsSkipped())
      return;
    bytes_ = uint32_t(sysconf(_SC_PAGESIZE));
    ring_fd_ = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "mt_test_ring", 0, 0, bytes_, nullptr);
    ASSERT_GE(ring_fd_, 0) << std::strerror(errno);
    auto program = writer(ring_fd_);
    prog_fd_ = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "mt_test_writer", "GPL", program.data(),
                             program.size(), nullptr);
    ASSERT_GE(prog_fd_, 0) << std::strerror(errno);
  }
  void TearDown() override {
    if (prog_fd_ >= 0)
      close(prog_fd_);
    if (ring_fd_ >= 0)
      close(ring_fd_);
  }
  void write(uint64_t seq) {
    LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &seq, .ctx_size_in = sizeof(seq));
    ASSERT_EQ(bpf_prog_test_run_opts(prog_fd_, &opts), 0) << std::strerror(errno);
  }
  static void expect_record(const RingReader::Record &r, uint64_t seq) {
    ASSERT_EQ(r.size, 8u * kWords);
    for (int i = 0; i < kWords; i++) {
      uint64_t word;
      std::memcpy(&word, r.data + 8 * i, 8);
      ASSERT_EQ(word, seq * 32 + i) << "record " << seq << ", word " << i;
    }
  }

  uint32_t bytes_ = 0;
  int ring_fd_ = -1, prog_fd_ = -1;
};

TEST_F(RingReaderTest, RecordsThatWrapAroundTheEndReadWhole) {
  RingReader ring(ring_fd_, bytes_);
  uint64_t seq = 0, read = 0;
  size_t wrapped = 0;
  // 50 laps, a few records at a time: each lap ends inside a record.
  while (ring.read_position() < 50ull * bytes_) {
    for (int i = 0; i < 3; i++)
      write(seq++);
    RingReader::Record r;
    while (ring.peek(r)) {
      expect_record(r, read++);
      wrapped += (r.pos + 8) / bytes_ != (r.end - 1) / bytes_;
      ring.advance(r);
    }
    ring.release_to(ring.read_position());
  }
  EXPECT_EQ(read, seq);
  EXPECT_GT(wrapped, 10u);
}

TEST_F(RingReaderTest, HeldRecordsStayWholeUntilReleased) {
  RingReader ring(ring_fd_, bytes_);
  uint64_t seq = 0, first = 0;
  for (int lap = 0; lap < 20; lap++) {
    // Fill the ring (what finds it full is dropped by the kernel), read it
    // all, and check every record again before letting the kernel reuse it.
    while (ring.unread() + 208 <= bytes_)
      write(seq++);
    std::vector<RingReader::Record> held;
    RingReader::Record r;
    while (ring.peek(r)) {
      held.push_back(r);
      ring.advance(r);
    }
    ASSERT_EQ(held.size(), seq - first);
    for (size_t i = 0; i < held.size(); i++)
      expect_record(held[i], first + i);
    ring.release_to(ring.read_position());
    first = seq;
  }
}

}  // namespace
}  // namespace e2e
