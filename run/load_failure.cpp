// Why the kernel refused to load an object, said of the script's probe.
#include "run/load_failure.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <string_view>

#include "kernel/probe_kinds.h"

namespace mt {

namespace {

// The program named in libbpf's "prog 'NAME': ..." failure lines.
std::string failed_program(const std::string &log) {
  size_t pos = log.find("prog '");
  if (pos == std::string::npos)
    return "";
  size_t end = log.find('\'', pos + 6);
  return log.substr(pos + 6, end - pos - 6);
}

// The verifier's own words: the last non-empty line of its log.
std::string verifier_summary(const std::string &log) {
  size_t begin = log.find("-- BEGIN PROG LOAD LOG --");
  size_t end = log.find("-- END PROG LOAD LOG --");
  if (begin == std::string::npos || end == std::string::npos)
    return "";
  std::string body = log.substr(begin, end - begin);
  std::string last;
  size_t start = 0;
  while (start < body.size()) {
    size_t nl = body.find('\n', start);
    if (nl == std::string::npos)
      nl = body.size();
    std::string line = body.substr(start, nl - start);
    if (!line.empty() && line.find("processed ") != 0 && line.find("-- BEGIN") != 0)
      last = line;
    start = nl + 1;
  }
  return last;
}

// The script line the verifier last walked, from its log's line
// annotations ("; TEXT @ FILE:LINE", kept from the generator's #line
// directives): in a program several probes share, the probe it refused.
// None when only the engine's own lines ("<moontrace>") are named.
std::optional<ScriptLocation> last_script_line(const std::string &log) {
  size_t end = log.find("-- END PROG LOAD LOG --");
  std::optional<ScriptLocation> found;
  for (size_t start = 0; start < end && start < log.size();) {
    size_t nl = std::min(log.find('\n', start), log.size());
    std::string_view line(log.data() + start, nl - start);
    start = nl + 1;
    size_t at = line.rfind(" @ ");
    size_t colon = line.rfind(':');
    if (!line.starts_with(";") || at == std::string_view::npos || colon == std::string_view::npos ||
        colon < at)
      continue;
    std::string_view file = line.substr(at + 3, colon - at - 3);
    int number = 0;
    auto [rest, ec] = std::from_chars(line.data() + colon + 1, line.data() + line.size(), number);
    if (ec != std::errc() || rest != line.data() + line.size() || file.empty() ||
        file == "<moontrace>" || number <= 0)
      continue;
    found = ScriptLocation{std::string(file), number, 0};
  }
  return found;
}

}  // namespace

Error load_failure(int err, const std::string &log, const GeneratedProgram &generated,
                   const Declaration &decl, bool verbose) {
  std::string prog = failed_program(log);
  for (const auto &p : generated.probes) {
    if (p.attached_program != prog)
      continue;
    ScriptLocation where = decl.probes[p.decl_id].where;
    // Probes that share the program: the line the verifier walked last
    // tells which one it refused.
    if (std::count_if(generated.probes.begin(), generated.probes.end(),
                      [&](const auto &q) { return q.attached_program == prog; }) > 1)
      where = last_script_line(log).value_or(where);
    if (err == -EPERM && probe_kind(p.name.kind).needs == KernelNeeds::Fentry)
      return Error(
          "the kernel refused to load " + p.probe_name +
              " (EPERM): this kernel does not allow fentry/fexit here; use a tracepoint or kprobe",
          where, log);
    // A stack Clang accepted (512 bytes) that the call to mt_flush outgrew
    // (its frame counts with its caller's: 16 or 32 bytes, by kernel).
    if (log.find("combined stack size of") != std::string::npos)
      return Error(
          "a probe's keys and values leave too little of the 512 bytes of stack BPF allows "
          "for handing its records over (about 480 are theirs): use shorter strings "
          "(str(ptr, N)) or fewer or smaller keys",
          where, log);
    std::string reason = verifier_summary(log);
    return Error("the BPF verifier rejected the program for " + p.probe_name +
                     (reason.empty() ? "" : ": " + reason) +
                     (verbose ? "" : " (run with -v for the kernel's log)"),
                 where, log);
  }
  return Error(std::string("cannot load the BPF programs: ") + std::strerror(-err) +
                   (verbose ? "" : " (run with -v for details)"),
               {}, log);
}

}  // namespace mt
