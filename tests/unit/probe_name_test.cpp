// Probe names: text in, kind and parts out; glob matching.
#include "kernel/probe_name.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace mt {

TEST(ProbeName, ParsesTracepoint) {
  auto n = parse_probe_name("tracepoint:io_uring:io_uring_complete");
  EXPECT_EQ(n.kind, ProbeKind::Tracepoint);
  EXPECT_EQ(n.category, "io_uring");
  EXPECT_EQ(n.target, "io_uring_complete");
}

TEST(ProbeName, ParsesEveryKind) {
  EXPECT_EQ(parse_probe_name("tp_btf:io_uring_complete").kind, ProbeKind::TpBtf);
  EXPECT_EQ(parse_probe_name("rawtracepoint:sched_switch").kind, ProbeKind::RawTracepoint);
  EXPECT_EQ(parse_probe_name("kprobe:vfs_read").kind, ProbeKind::Kprobe);
  EXPECT_EQ(parse_probe_name("kretprobe:vfs_read").kind, ProbeKind::Kretprobe);
  EXPECT_EQ(parse_probe_name("fentry:vfs_read").kind, ProbeKind::Fentry);
  EXPECT_EQ(parse_probe_name("fexit:vfs_read").kind, ProbeKind::Fexit);
  EXPECT_EQ(parse_probe_name("begin").kind, ProbeKind::Begin);
  EXPECT_EQ(parse_probe_name("end").kind, ProbeKind::End);
  auto u = parse_probe_name("uprobe:/usr/lib/libc.so.6:malloc");
  EXPECT_EQ(u.target, "/usr/lib/libc.so.6");
  EXPECT_EQ(u.symbol, "malloc");
  EXPECT_EQ(parse_probe_name("interval:s:2").interval_ms, 2000);
  auto usdt = parse_probe_name("usdt:/usr/bin/python3:python:function__entry");
  EXPECT_EQ(usdt.kind, ProbeKind::Usdt);
  EXPECT_EQ(usdt.target, "/usr/bin/python3");
  EXPECT_EQ(usdt.category, "python");
  EXPECT_EQ(usdt.symbol, "function__entry");
  EXPECT_EQ(usdt.to_string(), "usdt:/usr/bin/python3:python:function__entry");
}

TEST(ProbeName, RejectsMalformedNames) {
  try {
    parse_probe_name("tracepoint:io_uring");
    ADD_FAILURE() << "a malformed name was taken";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(),
                 "malformed probe 'tracepoint:io_uring': expected tracepoint:CATEGORY:NAME");
  }
  EXPECT_THROW(parse_probe_name("bogus:x"), Error);
  EXPECT_THROW(parse_probe_name("interval:ms:0"), Error);
  EXPECT_THROW(parse_probe_name("uprobe:/bin/sh"), Error);
  for (const char *usdt :
       {"usdt:/bin/sh:name", "usdt:/bin/sh::name", "usdt:/bin/sh:p:", "usdt::p:n"})
    EXPECT_THROW(parse_probe_name(usdt), Error) << usdt;
}

TEST(ProbeName, GlobMatches) {
  EXPECT_TRUE(glob_match("io_uring_*", "io_uring_complete"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("sys_e?ter_*", "sys_enter_read"));
  EXPECT_FALSE(glob_match("io_uring_c*", "io_uring_submit_req"));
}

}  // namespace mt
