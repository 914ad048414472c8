#include "kernel/probe_name.h"

#include <gtest/gtest.h>

namespace mt {

TEST(ProbeName, ParsesTracepoint) {
  std::string error;
  auto n = parse_probe_name("tracepoint:io_uring:io_uring_complete", error);
  ASSERT_TRUE(n) << error;
  EXPECT_EQ(n->kind, ProbeKind::Tracepoint);
  EXPECT_EQ(n->category, "io_uring");
  EXPECT_EQ(n->target, "io_uring_complete");
}

TEST(ProbeName, ParsesEveryKind) {
  std::string error;
  EXPECT_EQ(parse_probe_name("tp_btf:io_uring_complete", error)->kind, ProbeKind::TpBtf);
  EXPECT_EQ(parse_probe_name("rawtracepoint:sched_switch", error)->kind, ProbeKind::RawTracepoint);
  EXPECT_EQ(parse_probe_name("kprobe:vfs_read", error)->kind, ProbeKind::Kprobe);
  EXPECT_EQ(parse_probe_name("kretprobe:vfs_read", error)->kind, ProbeKind::Kretprobe);
  EXPECT_EQ(parse_probe_name("fentry:vfs_read", error)->kind, ProbeKind::Fentry);
  EXPECT_EQ(parse_probe_name("fexit:vfs_read", error)->kind, ProbeKind::Fexit);
  EXPECT_EQ(parse_probe_name("begin", error)->kind, ProbeKind::Begin);
  EXPECT_EQ(parse_probe_name("end", error)->kind, ProbeKind::End);
  auto u = parse_probe_name("uprobe:/usr/lib/libc.so.6:malloc", error);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->target, "/usr/lib/libc.so.6");
  EXPECT_EQ(u->symbol, "malloc");
  auto i = parse_probe_name("interval:s:2", error);
  ASSERT_TRUE(i);
  EXPECT_EQ(i->interval_ms, 2000);
}

TEST(ProbeName, RejectsMalformedNames) {
  std::string error;
  EXPECT_FALSE(parse_probe_name("tracepoint:io_uring", error));
  EXPECT_NE(error.find("tracepoint:CATEGORY:NAME"), std::string::npos);
  EXPECT_FALSE(parse_probe_name("bogus:x", error));
  EXPECT_FALSE(parse_probe_name("interval:ms:0", error));
}

TEST(ProbeName, GlobMatches) {
  EXPECT_TRUE(glob_match("io_uring_*", "io_uring_complete"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("sys_e?ter_*", "sys_enter_read"));
  EXPECT_FALSE(glob_match("io_uring_c*", "io_uring_submit_req"));
}

}  // namespace mt
