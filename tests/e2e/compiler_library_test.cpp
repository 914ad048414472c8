// The compiler library (Clang and LLVM) is loaded only when a script must
// be compiled: --help, list, -l, dump and a warm start never map it
// (LD_DEBUG=files names every library the loader opens), and a warm start
// runs where LLVM's libraries are gone (hidden in a mount namespace); a
// compile there fails in one line. The library is checked like a script
// before it is loaded.
#include <sys/stat.h>

#include <filesystem>

#include "tests/e2e/uring_trace.h"

namespace e2e {
namespace {

class E2eCompilerLibrary : public BpfTest {};

// COMMAND's result with the loader naming the files it opens, and with the
// object cache in `cache`.
Result traced_loading(Command c, const std::string &cache) {
  c.env.push_back({"LD_DEBUG", "files"});
  c.env.push_back({"MOONTRACE_CACHE", cache});
  return run(c, 120s);
}

bool loads_llvm(const Result &r) {
  return contains(r.err, "libLLVM") || contains(r.err, "libclang-cpp") ||
         contains(r.err, "libmoontrace-compiler");
}

TEST_F(E2eCompilerLibrary, OnlyACompileLoadsLlvm) {
  TempDir dir;
  std::string cache = dir.path() / "cache";
  ASSERT_EQ(mkdir(cache.c_str(), 0700), 0);
  std::string trace = dir.file("t.fxt");
  for (const auto &args : std::vector<std::vector<std::string>>{
           {"--help"}, {"list"}, {"-l", "io_uring:*"}, {"uring", "--help"}}) {
    auto r = traced_loading(mt(args), cache);
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_FALSE(loads_llvm(r)) << args[0];
  }
  auto cold = traced_loading(mt({"-o", trace, "-c", "true", "uring"}), cache);
  EXPECT_EQ(cold.exit_code, 0) << cold;
  EXPECT_TRUE(loads_llvm(cold)) << "a compile without LLVM?";
  auto warm = traced_loading(mt({"-o", trace, "-c", "true", "uring"}), cache);
  EXPECT_EQ(warm.exit_code, 0) << warm;
  EXPECT_FALSE(loads_llvm(warm)) << "a warm start loaded LLVM";
  auto dump = traced_loading(mt({"dump", trace}), cache);
  EXPECT_EQ(dump.exit_code, 0) << dump;
  EXPECT_FALSE(loads_llvm(dump));
}

TEST_F(E2eCompilerLibrary, AWarmStartRunsWithoutLlvmAndACompileSaysWhy) {
  TempDir dir;
  std::string cache = dir.path() / "cache";
  ASSERT_EQ(mkdir(cache.c_str(), 0700), 0);
  std::string trace = dir.file("t.fxt");
  auto cold = run(
      {mt({"-o", trace, "-c", workload("uring_demo"), "uring"}).argv, {{"MOONTRACE_CACHE", cache}}},
      120s);
  ASSERT_EQ(cold.exit_code, 0) << cold;
  auto warm = without_llvm({"-o", trace, "-c", workload("uring_demo"), "uring"}, cache);
  ASSERT_EQ(warm.exit_code, 0) << warm;
  EXPECT_FALSE(valid_trace(trace).named("submit").empty()) << warm;
  // A script not compiled yet needs the compiler.
  auto compile = without_llvm({"-c", "true", "demo"}, cache);
  EXPECT_TRUE(one_line_error(compile, {"cannot load the compiler library " + compiler_library()}))
      << compile;
}

// Found next to the executable, the library must be as trustworthy as a
// script: here it is writable by others, and refused before it loads.
TEST_F(E2eCompilerLibrary, ALibraryOthersCanWriteIsRefused) {
  TempDir dir;
  std::string bin = dir.file("moontrace"), lib = dir.file("libmoontrace-compiler.so");
  std::filesystem::copy_file(moontrace(), bin);
  std::filesystem::copy_file(compiler_library(), lib);
  ASSERT_EQ(chmod(lib.c_str(), 0666), 0);
  std::string cache = dir.path() / "cache";
  ASSERT_EQ(mkdir(cache.c_str(), 0700), 0);
  Command c;
  c.argv = {bin, "-c", "true", "demo"};
  c.env.push_back({"MOONTRACE_CACHE", cache});
  auto r = run(c, 120s);
  EXPECT_TRUE(one_line_error(r, {"refusing to load " + lib, "writable by"})) << r;
}

}  // namespace
}  // namespace e2e
