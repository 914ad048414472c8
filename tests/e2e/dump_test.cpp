// `moontrace dump FILE [--json]`: a trace written word by word here, printed
// one record a line; a malformed trace is one error line naming the offset.
// No BPF needed.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/e2e/e2e_support.h"
#include "tests/fxt_validator.h"
#include "tests/fxt_words.h"

namespace e2e {
namespace {

using namespace mt::testing;

// A small valid trace: pid 10 "app" with thread 11 "main"; a syscall slice
// holding an instant that begins a flow; the flow ends in a complete event.
Words small_trace() {
  const uint64_t process_arg = 8 | (2 + 1) << 4 | inl("process") << 16;
  const uint64_t fd_arg = 1 | 1 << 4 | 2ULL << 16 | uint64_t(3) << 32;       // int32 fd=3
  const uint64_t req_arg = 7 | 2 << 4 | 3ULL << 16;                          // pointer req
  return Words{kMagic} + record(1, 0, {1000000000}) +                        // 8: init
         record(2, 1 << 16 | 8ULL << 32, padded("io_uring")) +               // 24: string 1
         record(2, 2 << 16 | 2ULL << 32, padded("fd")) +                     // 40: string 2
         record(2, 3 << 16 | 3ULL << 32, padded("req")) +                    // 56: string 3
         record(3, 1 << 16, {10, 11}) +                                      // 72: thread 1
         record(7, 1 << 16 | inl("app") << 24, Words{10} + padded("app")) +  // 96: process
         record(7, 2 << 16 | inl("main") << 24 | 1ULL << 40,                 // 120: thread
                Words{11} + padded("main") + Words{process_arg} + padded("process") + Words{10}) +
         record(4, 2 << 16 | 1 << 20 | 1 << 24 | 1ULL << 32 | inl("enter") << 48,  // 168: begin
                Words{100} + padded("enter") + Words{fd_arg}) +
         record(4, 0 << 16 | 1 << 20 | 1 << 24 | 1ULL << 32 | inl("submit") << 48,  // 200: instant
                Words{110} + padded("submit") + Words{req_arg, 0xffff8881000ULL}) +
         record(4, 8 << 16 | 1 << 24 | 1ULL << 32 | inl("req") << 48,  // 240: flow begin
                Words{110} + padded("req") + Words{77}) +
         record(4, 3 << 16 | 1 << 24 | 1ULL << 32 | inl("enter") << 48,  // 272: end
                Words{120} + padded("enter")) +
         record(4, 4 << 16 | 1 << 24 | 1ULL << 32 | inl("complete") << 48,  // 296: complete
                Words{130} + padded("complete") + Words{140}) +
         record(4, 10 << 16 | 1 << 24 | 1ULL << 32 | inl("req") << 48,  // 328: flow end
                Words{135} + padded("req") + Words{77});                // 360 bytes in all
}

TEST(E2eDump, PrintsATraceOneRecordALine) {
  TempDir dir;
  std::string path = dir.write("small.fxt", bytes(small_trace()));
  auto r = run(mt({"dump", path}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(lines(r.out), (std::vector<std::string>{
                              "init ticks_per_second=1000000000",
                              R"(kobj process koid=10 name="app")",
                              R"(kobj thread koid=11 name="main" {process=10})",
                              "100 begin pid=10 tid=11 io_uring/enter {fd=3}",
                              "110 instant pid=10 tid=11 io_uring/submit {req=0xffff8881000}",
                              "110 flow_begin pid=10 tid=11 io_uring/req flow_id=77",
                              "120 end pid=10 tid=11 io_uring/enter",
                              "130 complete pid=10 tid=11 io_uring/complete end_ts=140",
                              "135 flow_end pid=10 tid=11 io_uring/req flow_id=77",
                          }))
      << r;
  // And Perfetto would import it cleanly.
  EXPECT_EQ(mt::testing::perfetto_problems_in_file(path), std::vector<std::string>{});
}

TEST(E2eDump, PrintsJsonLines) {
  TempDir dir;
  std::string path = dir.write("small.fxt", bytes(small_trace()));
  auto r = run(mt({"dump", path, "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  auto out = lines(r.out);
  ASSERT_EQ(out.size(), 9u) << r;
  EXPECT_EQ(out[0], R"({"offset":8,"type":"init","ticks_per_second":1000000000})");
  EXPECT_EQ(out[2], R"({"offset":120,"type":"kobj","kind":"thread","koid":11,"name":"main",)"
                    R"("args":{"process":10}})");
  EXPECT_EQ(out[4], R"({"offset":200,"type":"event","event":"instant","ts":110,"pid":10,)"
                    R"("tid":11,"category":"io_uring","name":"submit",)"
                    R"("args":{"req":"0xffff8881000"}})");
  EXPECT_EQ(out[5], R"({"offset":240,"type":"event","event":"flow_begin","ts":110,"pid":10,)"
                    R"("tid":11,"category":"io_uring","name":"req","flow_id":77,"args":{}})");
  EXPECT_EQ(out[7], R"({"offset":296,"type":"event","event":"complete","ts":130,"pid":10,)"
                    R"("tid":11,"category":"io_uring","name":"complete","end_ts":140,"args":{}})");
}

TEST(E2eDump, ATruncatedTraceIsOneErrorNamingTheOffset) {
  TempDir dir;
  std::string b = bytes(small_trace());
  std::string path = dir.write("cut.fxt", b.substr(0, b.size() - 8));
  auto r = run(mt({"dump", path}));
  EXPECT_TRUE(one_line_error(r, {path, "offset 328", "runs past the end"}));
  // What precedes the cut is printed.
  EXPECT_EQ(lines(r.out).size(), 8u) << r;
}

TEST(E2eDump, NotATraceOrNoFile) {
  TempDir dir;
  auto r = run(mt({"dump", dir.write("text.fxt", "hello, world\n")}));
  EXPECT_TRUE(one_line_error(r, {"text.fxt", "offset 0", "not an FXT trace"}));
  r = run(mt({"dump", dir.file("missing.fxt")}));
  EXPECT_TRUE(one_line_error(r, {"cannot read", "missing.fxt"}));
}

}  // namespace
}  // namespace e2e
