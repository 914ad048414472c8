// Compiling generated BPF C in a forked child, for tests that compile more
// than once.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "compiler/clang_compiler.h"

namespace mt::testing {

inline void put(std::string &out, const std::string &text) {
  uint64_t size = text.size();
  out.append(reinterpret_cast<const char *>(&size), sizeof(size)).append(text);
}

inline std::string get(const std::string &in, size_t &pos) {
  uint64_t size = 0;
  if (pos + sizeof(size) > in.size())
    return "";
  in.copy(reinterpret_cast<char *>(&size), sizeof(size), pos);
  pos += sizeof(size);
  std::string text = in.substr(pos, size);
  pos += text.size();
  return text;
}

// Compiles in a child process: LLVM 19's BPF backend keeps CO-RE relocation
// globals in a static map (BPFAbstractMemberAccess::GEPGlobals) that outlives
// their module, so a second in-process compile touching the same field
// crashes.
inline CompileResult compile_in_child(const std::string &source, const CompileOptions &options) {
  int fds[2];
  if (pipe(fds) != 0)
    return {};
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    CompileResult result = compile_bpf(source, options);
    std::string out;
    put(out, result.ok ? "1" : "0");
    put(out, std::string(result.object.begin(), result.object.end()));
    put(out, result.rewritten_source);
    for (const auto &d : result.diagnostics)
      put(out, d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " +
                   (d.is_error ? "error: " : "warning: ") + d.message);
    for (size_t done = 0; done < out.size();) {
      ssize_t n = write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0)
        _exit(1);
      done += n;
    }
    _exit(0);
  }
  close(fds[1]);
  std::string in;
  char buffer[65536];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof(buffer))) > 0;)
    in.append(buffer, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CompileResult result;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    result.diagnostics.push_back({"", 0, 0, true, "compiler process died"});
    return result;
  }
  size_t pos = 0;
  result.ok = get(in, pos) == "1";
  std::string object = get(in, pos);
  result.object.assign(object.begin(), object.end());
  result.rewritten_source = get(in, pos);
  while (pos < in.size())
    result.diagnostics.push_back({"", 0, 0, false, get(in, pos)});
  return result;
}

}  // namespace mt::testing
