// moontrace -l [PATTERN] and -lv: the probes of the running kernel, one
// per line, and with -v their arguments.
#include <unistd.h>

#include <algorithm>

#include "tests/e2e/e2e_support.h"

namespace e2e {
namespace {

// Listing tracepoints needs tracefs, which only root can read.
class E2eListing : public BpfTest {};

bool starts_with(const std::string &text, const std::string &prefix) {
  return text.rfind(prefix, 0) == 0;
}

TEST_F(E2eListing, CategoryPatternListsItsTracepointsSorted) {
  auto r = run(mt({"-l", "io_uring:*"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  auto probes = lines(r.out);
  EXPECT_GE(probes.size(), 15u) << r;
  for (const auto &p : probes)
    EXPECT_TRUE(starts_with(p, "tracepoint:io_uring:")) << p;
  EXPECT_TRUE(std::is_sorted(probes.begin(), probes.end())) << r;
  EXPECT_EQ(std::adjacent_find(probes.begin(), probes.end()), probes.end()) << r;
  auto listed = [&](const std::string &p) {
    return std::find(probes.begin(), probes.end(), p) != probes.end();
  };
  EXPECT_TRUE(listed("tracepoint:io_uring:io_uring_complete")) << r;
  EXPECT_TRUE(listed("tracepoint:io_uring:io_uring_submit_req")) << r;
}

TEST_F(E2eListing, FullNameAndKindPrefixedPatternMatchTheSame) {
  auto r = run(mt({"-l", "tracepoint:io_uring:*"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, run(mt({"-l", "io_uring:*"})).out);
}

TEST_F(E2eListing, ExactNameListsOneProbe) {
  auto r = run(mt({"-l", "tracepoint:io_uring:io_uring_complete"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(lines(r.out), std::vector<std::string>{"tracepoint:io_uring:io_uring_complete"}) << r;
}

TEST_F(E2eListing, WildcardsMatchInsideTheName) {
  auto r = run(mt({"-l", "*uring_complete*"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  auto probes = lines(r.out);
  EXPECT_NE(std::find(probes.begin(), probes.end(), "tracepoint:io_uring:io_uring_complete"),
            probes.end())
      << r;
  for (const auto &p : probes)
    EXPECT_TRUE(contains(p, "uring_complete")) << p;
}

TEST_F(E2eListing, VerboseShowsEachFieldWithItsType) {
  auto r = run(mt({"-lv", "io_uring:io_uring_complete"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  auto out = lines(r.out);
  ASSERT_FALSE(out.empty()) << r;
  EXPECT_EQ(out[0], "tracepoint:io_uring:io_uring_complete");
  std::vector<std::string> fields(out.begin() + 1, out.end());
  EXPECT_NE(std::find(fields.begin(), fields.end(), "    u64 user_data"), fields.end()) << r;
  EXPECT_NE(std::find(fields.begin(), fields.end(), "    int res"), fields.end()) << r;
  EXPECT_NE(std::find(fields.begin(), fields.end(), "    void * req"), fields.end()) << r;
  for (const auto &f : fields) {
    EXPECT_TRUE(starts_with(f, "    ")) << f;
    EXPECT_FALSE(contains(f, "common_")) << f;
  }
  // -v given on its own means the same.
  EXPECT_EQ(run(mt({"-v", "-l", "io_uring:io_uring_complete"})).out, r.out);
}

TEST_F(E2eListing, VerboseShowsDataLocStrings) {
  auto r = run(mt({"-lv", "tracepoint:io_uring:io_uring_submit_req"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.out, "\n    __data_loc char[] op_str\n")) << r;
}

TEST_F(E2eListing, PatternMatchingNothingIsAnError) {
  auto r = run(mt({"-l", "io_uring:no_such_event*"}));
  EXPECT_TRUE(one_line_error(r, {"no probes match", "io_uring:no_such_event*"}));
  EXPECT_EQ(r.out, "") << r;
}

TEST_F(E2eListing, UprobeFunctionsOfABinaryAreListed) {
  std::string binary = workload("nop_storm");
  auto r = run(mt({"-l", "uprobe:" + binary + ":main"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(lines(r.out), std::vector<std::string>{"uprobe:" + binary + ":main"}) << r;
  r = run(mt({"-l", "uretprobe:" + binary + ":*"}));
  auto all = lines(r.out);
  EXPECT_GT(all.size(), 1u) << r;
  EXPECT_EQ(std::count(all.begin(), all.end(), "uretprobe:" + binary + ":main"), 1) << r;
  r = run(mt({"-l", "uprobe:/etc/hostname:*"}));
  EXPECT_TRUE(one_line_error(r, {"/etc/hostname is not an ELF file"}));
}

// Where the kernel cannot run kprobes, listing them says so, not that
// nothing matched.
TEST_F(E2eListing, KprobesOnAKernelWithoutThemSaySo) {
  auto r = run(mt({"-l", "kprobe:vfs_read"}));
  if (access("/sys/kernel/tracing/kprobe_events", F_OK) == 0) {
    EXPECT_EQ(r.out, "kprobe:vfs_read\n") << r;
    return;
  }
  EXPECT_TRUE(one_line_error(r, {"no probes match 'kprobe:vfs_read'", "CONFIG_KPROBES"}));
}

TEST_F(E2eListing, WithoutRootTracepointsAreMissingAndSaidSo) {
  auto r = run(as_nobody(mt({"-l", "io_uring:*"})));
  EXPECT_TRUE(one_line_error(r, {"no probes match", "tracefs is readable by root only"}));
}

TEST(E2eListingCli, ExtraArgumentIsAnError) {
  auto r = run(mt({"-l", "io_uring:*", "extra"}));
  EXPECT_TRUE(one_line_error(r, {"-l takes one PATTERN", "'extra'"}));
}

}  // namespace
}  // namespace e2e
