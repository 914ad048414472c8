// -l: probe patterns, and the probes and arguments a fake kernel lists.
#include "kernel/probe_listing.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>

#include "tests/unit/stage_fixtures.h"

namespace mt {
namespace {

using testing::FakeKernel;

// What list_probes prints, and how many probes it counted.
std::pair<std::string, size_t> listing(const std::string &pattern, bool verbose,
                                       KernelFacts &kernel) {
  char *buffer = nullptr;
  size_t size = 0;
  std::FILE *out = open_memstream(&buffer, &size);
  size_t count = list_probes(pattern, verbose, kernel, out);
  std::fclose(out);
  std::string text(buffer, size);
  std::free(buffer);
  return {text, count};
}

TEST(ProbePattern, MatchesTheFullNameOrTheNameWithoutItsKind) {
  const std::string complete = "tracepoint:io_uring:io_uring_complete";
  EXPECT_TRUE(ProbePattern("").matches(complete));
  EXPECT_TRUE(ProbePattern(complete).matches(complete));
  EXPECT_TRUE(ProbePattern("tracepoint:io_uring:*").matches(complete));
  EXPECT_TRUE(ProbePattern("io_uring:*").matches(complete));
  EXPECT_TRUE(ProbePattern("io_uring:io_uring_complet?").matches(complete));
  EXPECT_TRUE(ProbePattern("*uring_complete*").matches(complete));
  EXPECT_TRUE(ProbePattern("vfs_read").matches("fentry:vfs_read"));
  EXPECT_FALSE(ProbePattern("io_uring:*").matches("tracepoint:sched:sched_switch"));
  EXPECT_FALSE(ProbePattern("io_uring_complete").matches(complete));
  EXPECT_FALSE(ProbePattern("kprobe:*").matches("fentry:vfs_read"));
}

TEST(ProbePattern, AKindPrefixRulesOutOtherKinds) {
  EXPECT_TRUE(ProbePattern("tracepoint:io_uring:*").may_match_kind(ProbeKind::Tracepoint));
  EXPECT_FALSE(ProbePattern("tracepoint:io_uring:*").may_match_kind(ProbeKind::Fentry));
  EXPECT_FALSE(ProbePattern("kprobe:vfs_*").may_match_kind(ProbeKind::Tracepoint));
  // "io_uring" is a category, not a kind.
  EXPECT_TRUE(ProbePattern("io_uring:*").may_match_kind(ProbeKind::Fentry));
  EXPECT_TRUE(ProbePattern("*:vfs_read").may_match_kind(ProbeKind::Kprobe));
}

TEST(ProbeListing, ListsMatchingTracepointsSorted) {
  FakeKernel kernel;
  auto [text, count] = listing("", false, kernel);
  EXPECT_EQ(count, 3u);
  EXPECT_EQ(text,
            "tracepoint:io_uring:io_uring_complete\n"
            "tracepoint:io_uring:io_uring_create\n"
            "tracepoint:sched:sched_switch\n");
  std::tie(text, count) = listing("io_uring:*", false, kernel);
  EXPECT_EQ(count, 2u);
  std::tie(text, count) = listing("nothing*", false, kernel);
  EXPECT_EQ(count, 0u);
  EXPECT_EQ(text, "");
}

TEST(ProbeListing, VerboseShowsTracepointFieldsAsTheFormatTypesThem) {
  FakeKernel kernel;
  auto [text, count] = listing("*io_uring_complete", true, kernel);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(text,
            "tracepoint:io_uring:io_uring_complete\n"
            "    void * ctx\n"
            "    void * req\n"
            "    u64 user_data\n"
            "    int res\n"
            "    unsigned cflags\n"
            "    u64 extra1\n"
            "    u64 extra2\n"
            "    __data_loc char[] op_str\n");
}

class KprobeKernel : public FakeKernel {
 public:
  bool has_kprobes() override { return true; }
  std::vector<std::string> kprobe_function_names() override { return {"vfs_read", "vfs_write"}; }
};

TEST(ProbeListing, ListsKprobesOnlyWhenTheKernelHasThem) {
  KprobeKernel with;
  auto [text, count] = listing("*vfs_*", false, with);
  EXPECT_EQ(text, "kprobe:vfs_read\nkprobe:vfs_write\n");
  FakeKernel without;
  EXPECT_EQ(listing("*vfs_*", false, without).second, 0u);
}

// The running kernel's BTF, as if fentry could be loaded here.
class FentryKernel : public FakeKernel {
 public:
  const KernelBtf *btf() override { return KernelBtf::get(); }
  std::string fentry_unavailable_reason() override { return ""; }
};

TEST(ProbeListing, VerboseShowsFunctionParametersAndReturnTypeFromBtf) {
  FentryKernel kernel;
  if (!kernel.btf())
    GTEST_SKIP() << "no kernel BTF";
  auto [text, count] = listing("fentry:vfs_read", true, kernel);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(text,
            "fentry:vfs_read\n"
            "    struct file * file\n"
            "    char * buf\n"
            "    size_t count\n"
            "    loff_t * pos\n"
            "    ssize_t retval\n");
}

}  // namespace
}  // namespace mt
