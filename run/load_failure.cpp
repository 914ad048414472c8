// Why the kernel refused to load an object, said of the script's probe.
#include "run/load_failure.h"

#include <cerrno>
#include <cstring>

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

}  // namespace

Error load_failure(int err, const std::string &log, const GeneratedProgram &generated,
                   const Declaration &decl, bool verbose) {
  std::string prog = failed_program(log);
  for (const auto &p : generated.probes) {
    if (p.attached_program != prog)
      continue;
    const ProbeDecl &d = decl.probes[p.decl_id];
    if (err == -EPERM && probe_kind(p.name.kind).needs == KernelNeeds::Fentry)
      return Error(
          "the kernel refused to load " + p.probe_name +
              " (EPERM): this kernel does not allow fentry/fexit here; use a tracepoint or kprobe",
          d.where, log);
    // A stack Clang accepted (512 bytes) that the call to mt_flush outgrew
    // (its frame counts with its caller's: 16 or 32 bytes, by kernel).
    if (log.find("combined stack size of") != std::string::npos)
      return Error(
          "a probe's keys and values leave too little of the 512 bytes of stack BPF allows "
          "for handing its records over (about 480 are theirs): use shorter strings "
          "(str(ptr, N)) or fewer or smaller keys",
          d.where, log);
    std::string reason = verifier_summary(log);
    return Error("the BPF verifier rejected the program for " + p.probe_name +
                     (reason.empty() ? "" : ": " + reason) +
                     (verbose ? "" : " (run with -v for the kernel's log)"),
                 d.where, log);
  }
  return Error(std::string("cannot load the BPF programs: ") + std::strerror(-err) +
                   (verbose ? "" : " (run with -v for details)"),
               {}, log);
}

}  // namespace mt
