// Without --unsafe a script's C can only trace; with it, it loads as
// written. Checked on the compiled object, also when it comes from the cache.
#include "tests/e2e/e2e_support.h"

namespace e2e {
namespace {

class KernelSandbox : public BpfTest {};

// bpf_send_signal(0): only a permission check, should it ever run.
const char *kSignalScript =
    "-- signal.lua\n"
    "probe(\"tracepoint:syscalls:sys_enter_getppid\", {\n"
    "  action = \"((long (*)(int))109)(0);\",\n"
    "})\n";

const char *kRefusal =
    "moontrace: signal.lua:3: bpf_send_signal (helper 109) is not allowed in a script; it can "
    "only trace (run with --unsafe to allow it)";

TEST_F(KernelSandbox, AHelperCalledByNumberIsRefusedAndNothingIsAttached) {
  TempDir dir;
  dir.write("signal.lua", kSignalScript);
  Command c = mt({"-c", "true", "signal.lua"});
  c.cwd = dir.path().string();
  Result r = run(c);
  EXPECT_TRUE(one_line_error(r, {kRefusal})) << r;
  EXPECT_EQ(r.err_lines(), std::vector<std::string>{kRefusal}) << r;
  EXPECT_FALSE(contains(r.err, "attached")) << r;
}

// Printing to the kernel's one trace buffer acts on what others read.
TEST_F(KernelSandbox, PrintingToTheKernelsTraceBufferIsRefused) {
  TempDir dir;
  dir.write("print.lua",
            "probe(\"tracepoint:syscalls:sys_enter_getppid\", {\n"
            "  action = 'char s[] = \"x\"; ((long (*)(const char *, __u32))6)(s, sizeof(s));',\n"
            "})\n");
  Command c = mt({"-c", "true", "print.lua"});
  c.cwd = dir.path().string();
  EXPECT_TRUE(one_line_error(run(c), {"print.lua:2: bpf_trace_printk (helper 6) is not allowed"}));
}

TEST_F(KernelSandbox, UnsafeLoadsIt) {
  TempDir dir;
  dir.write("signal.lua", kSignalScript);
  Command c = mt({"--unsafe", "-c", "true", "signal.lua"});
  c.cwd = dir.path().string();
  Result r = run(c);
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.err, "attached 1 probe")) << r;
}

TEST_F(KernelSandbox, AnObjectCachedUnderUnsafeIsScannedToo) {
  TempDir dir;
  dir.write("signal.lua", kSignalScript);
  std::vector<std::pair<std::string, std::string>> env = {{"MOONTRACE_CACHE", dir.file("cache")}};
  Command unsafe = mt({"--unsafe", "-c", "true", "signal.lua"});
  unsafe.cwd = dir.path().string();
  unsafe.env = env;
  ASSERT_EQ(run(unsafe).exit_code, 0);
  Command safe = mt({"-v", "-c", "true", "signal.lua"});
  safe.cwd = dir.path().string();
  safe.env = env;
  Result r = run(safe);
  EXPECT_EQ(r.exit_code, 1) << r;
  EXPECT_TRUE(contains(r.err, "using cached object")) << r;
  EXPECT_TRUE(contains(r.err, kRefusal)) << r;
  EXPECT_FALSE(contains(r.err, "attached")) << r;
}

TEST_F(KernelSandbox, UnderUnsafeDirectivesCompileButSeeNoRealFiles) {
  TempDir dir;
  dir.write("defines.lua",
            "probe(\"tracepoint:syscalls:sys_enter_getppid\", {\n  action = [[\n"
            "#define TWICE(x) ((x) * 2)\n  if (TWICE(pid) == 4) return 0;\n]],\n})\n");
  dir.write("includes.lua",
            "probe(\"tracepoint:syscalls:sys_enter_getppid\", {\n  action = [[\n"
            "#include \"/etc/passwd\"\n]],\n})\n");
  Command defines = mt({"--unsafe", "-c", "true", "defines.lua"});
  defines.cwd = dir.path().string();
  Result r = run(defines);
  EXPECT_EQ(r.exit_code, 0) << r;
  Command includes = mt({"--unsafe", "-c", "true", "includes.lua"});
  includes.cwd = dir.path().string();
  r = run(includes);
  EXPECT_EQ(r.exit_code, 1) << r;
  EXPECT_TRUE(contains(r.err, "moontrace: includes.lua:3:10: error: '/etc/passwd' file not found"))
      << r;
  EXPECT_FALSE(contains(r.err, "root:")) << r;
}

// LLVM's BTF writer records the text of each line it attributes code to,
// read from the named file: a shipped script's name must not lead it to a
// file planted in the working directory.
TEST_F(KernelSandbox, TheCompilerReadsNoFileNamedLikeAShippedScript) {
  TempDir dir;
  std::string secret;
  for (int i = 1; i <= 40; i++)
    secret += "PLANTED-SECRET-" + std::to_string(i) + "\n";
  dir.write("secret", secret);
  std::filesystem::create_symlink(dir.file("secret"), dir.file("demo.lua"));
  Command c = mt({"-c", "true", "demo"});
  c.cwd = dir.path().string();
  c.env = {{"MOONTRACE_CACHE", dir.file("cache")}};
  Result r = run(c);
  ASSERT_EQ(r.exit_code, 0) << r;
  int objects = 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir.file("cache"))) {
    objects++;
    EXPECT_FALSE(contains(read_file(entry.path().string()), "PLANTED-SECRET"));
  }
  EXPECT_GE(objects, 1);
}

}  // namespace
}  // namespace e2e
