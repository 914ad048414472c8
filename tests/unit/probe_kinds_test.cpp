// The probe-kind table: one row per kind, in the enum's order, and the
// names scripts write parse to the kind of their row.
#include "kernel/probe_kinds.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "kernel/probe_name.h"

namespace mt {
namespace {

TEST(ProbeKinds, EveryKindHasItsOwnRow) {
  ASSERT_EQ(probe_kinds().size(), static_cast<size_t>(ProbeKind::End) + 1);
  for (size_t i = 0; i < probe_kinds().size(); i++)
    EXPECT_EQ(static_cast<size_t>(probe_kinds()[i].kind), i) << probe_kinds()[i].name;
}

TEST(ProbeKinds, NamesAndAliasesParseToTheirKind) {
  for (const ProbeKindInfo &k : probe_kinds()) {
    if (k.kind == ProbeKind::Begin || k.kind == ProbeKind::End)
      continue;
    std::string rest = k.kind == ProbeKind::Interval     ? ":ms:10"
                       : k.user_memory                   ? ":/bin/true:main"
                       : k.kind == ProbeKind::Tracepoint ? ":sched:sched_switch"
                                                         : ":vfs_read";
    ProbeName parsed = parse_probe_name(k.name + rest);
    EXPECT_EQ(parsed.kind, k.kind);
    EXPECT_EQ(parsed.in_kernel(), k.in_kernel);
    for (const char *alias : k.alias)
      if (alias)
        EXPECT_EQ(parse_probe_name(alias + rest).kind, k.kind) << alias;
  }
}

TEST(ProbeKinds, AnUnknownKindListsEveryKind) {
  std::string error;
  try {
    parse_probe_name("nope:x");
  } catch (const Error &e) {
    error = e.what();
  }
  EXPECT_NE(error.find("(expected tracepoint, tp_btf, rawtracepoint, kprobe, kretprobe, fentry, "
                       "fexit, uprobe, uretprobe, interval, begin or end)"),
            std::string::npos)
      << error;
}

}  // namespace
}  // namespace mt
