// The in-process Clang: C in, a BPF object with BTF or errors at script columns out.
#include "compiler/clang_compiler.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>

#include "common/error.h"
#include "stage_fixtures.h"

namespace mt {

namespace {

bool has_section(const std::vector<char> &elf, const char *name) {
  // Section names live in the string table; a plain search is enough here.
  std::string bytes(elf.begin(), elf.end());
  return bytes.find(name) != std::string::npos;
}

}  // namespace

TEST(ClangCompiler, EmitsABpfObjectWithBtf) {
  CompileResult r =
      compile_bpf(testing::generate_complete("args.res >= param.min", "args.user_data").source, {});
  ASSERT_TRUE(r.ok) << (r.diagnostics.empty() ? "" : r.diagnostics[0].message);
  ASSERT_GT(r.object.size(), 64u);
  EXPECT_EQ(std::memcmp(r.object.data(),
                        "\x7f"
                        "ELF",
                        4),
            0);
  EXPECT_EQ(static_cast<unsigned char>(r.object[18]), 247);  // e_machine EM_BPF
  EXPECT_TRUE(has_section(r.object, ".BTF"));
  EXPECT_TRUE(has_section(r.object, "tracepoint/io_uring/io_uring_complete"));
  EXPECT_TRUE(has_section(r.object, "mt_rec_0"));
}

TEST(ClangCompiler, ReportsErrorsAtTheScriptColumn) {
  CompileResult r =
      compile_bpf(testing::generate_complete("args.nosuch > 1", "args.res").source, {});
  ASSERT_FALSE(r.ok);
  ASSERT_FALSE(r.diagnostics.empty());
  const CompileDiagnostic &d = r.diagnostics[0];
  EXPECT_TRUE(d.is_error);
  EXPECT_EQ(d.file, "test.lua");
  EXPECT_EQ(d.line, 4);
  EXPECT_EQ(d.column, 18);  // the member name inside "args.nosuch" at column 13
  EXPECT_NE(d.message.find("nosuch"), std::string::npos);
}

namespace {

// Runs `compile` in a child (an LLVM fatal error leaves LLVM unusable):
// "ok", "failed", the message of the mt::Error it threw, or how it died.
std::string outcome_in_child(const std::function<CompileResult()> &compile) {
  int fds[2];
  if (pipe(fds) != 0)
    return "no pipe";
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    try {
      out = compile().ok ? "ok" : "failed";
    } catch (const Error &e) {
      out = e.what();
    }
    ssize_t ignored = write(fds[1], out.data(), out.size());
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  std::string in;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof(buffer))) > 0;)
    in.append(buffer, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status));
  return in;
}

}  // namespace

// Clang recurses once per operator: 16,000 terms overflowed the main
// thread's 8 MiB stack (SIGSEGV). The deepest expression a script may
// write (16 KiB, one operator a byte) compiles on the compile thread.
TEST(ClangCompiler, SurvivesTheDeepestExpressionAllowed) {
  std::string source = "int f(int x) {\n  return " + std::string(16 << 10, '!') + "x;\n}\n";
  EXPECT_EQ(outcome_in_child([&] { return compile_bpf(source, {}); }), "ok");
}

}  // namespace mt
