// Packs a script with its modules and objects; reads a package back and finds its object.
#include "app/package_step.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>

#include "app/compile_step.h"
#include "app/forked_child.h"
#include "common/error.h"
#include "common/sha256.h"
#include "common/trusted_path.h"
#include "common/write_all.h"
#include "compiler/object_cache.h"
#include "compiler/tracing_policy.h"
#include "kernel/btf_file_facts.h"
#include "output/output.h"
#include "output/output_file.h"
#include "run/stop_signals.h"
#include "script/lua_sandbox.h"
#include "script/lua_script.h"
#include "script/script_params.h"

namespace mt {

namespace {

struct ToolRun {
  int status = -1;     // exit status, -1 when it did not exit
  std::string output;  // stdout
  std::string errors;  // stderr
};

// ARGV run with INPUT on its stdin; its output kept. The tool is looked up
// in the system's directories only, not the caller's PATH.
ToolRun run_tool(const std::vector<std::string> &argv, const std::string &input,
                 const std::vector<int> &handed) {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
    throw Error(std::string("cannot run ") + argv[0] + ": " + std::strerror(errno));
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0)
    throw Error(std::string("cannot run ") + argv[0] + ": " + std::strerror(errno));
  if (pid == 0) {
    // Only stdin, stdout, stderr and the HANDED descriptors, as 3, 4...;
    // default signals; an environment of its own.
    std::vector<int> moved;
    for (int fd : handed)
      moved.push_back(fcntl(fd, F_DUPFD_CLOEXEC, 100));
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    for (size_t i = 0; i < moved.size(); i++)
      dup2(moved[i], static_cast<int>(3 + i));
    close_range(static_cast<unsigned>(3 + moved.size()), ~0U, 0);
    for (int sig = 1; sig < NSIG; sig++)
      signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    std::vector<char *> args;
    for (const auto &a : argv)
      args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    char path_env[] = "PATH=/usr/bin:/bin", lang_env[] = "LC_ALL=C";
    char *env[] = {path_env, lang_env, nullptr};
    for (const char *dir : {"/usr/bin/", "/bin/"})
      execve((dir + argv[0]).c_str(), args.data(), env);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  // SIGPIPE is ignored (stop_signals.h): a tool that stopped reading says
  // why in its status.
  write_all(in[1], input);
  close(in[1]);
  ToolRun result;
  result.output = read_to_end(out[0]).substr(0, 65536);
  result.errors = read_to_end(err[0]).substr(0, 65536);
  result.status = exit_status(pid);
  return result;
}

// The first line of TEXT, tamed for one line of an error.
std::string first_line(const std::string &text) {
  std::string line = text.substr(0, text.find('\n'));
  for (auto &c : line)
    if (static_cast<unsigned char>(c) < 0x20)
      c = '?';
  return line.substr(0, 200);
}

// Throws unless PATH.sig is a signature of BYTES by one of SIGNERS.
void verify_signature(const std::string &path, const std::string &bytes,
                      const std::string &signers) {
  std::string sig = path + ".sig";
  if (access(sig.c_str(), F_OK) != 0)
    throw Error("refusing to run " + path + ": --signers asks for its signature, " + sig +
                ", and there is none");
  // Both opened as scripts are, then handed over by descriptor: what was
  // checked is what ssh-keygen reads.
  UniqueFd signers_fd = open_trusted_file(signers, script_owners());
  UniqueFd sig_fd = open_trusted_file(sig, script_owners());
  std::vector<int> handed = {signers_fd.get(), sig_fd.get()};  // /dev/fd/3 and 4 for it
  ToolRun found = run_tool(
      {"ssh-keygen", "-Y", "find-principals", "-f", "/dev/fd/3", "-s", "/dev/fd/4"}, "", handed);
  std::string principal = found.output.substr(0, found.output.find('\n'));
  stop_if_signalled_before_tracing();
  if (found.status == 127)
    throw Error("cannot check " + sig + ": ssh-keygen is not installed (package openssh-client)");
  if (found.status != 0 || principal.empty())
    throw Error("refusing to run " + path + ": " + sig + " is by no signer " + signers +
                " allows (" + first_line(found.errors + found.output) + ")");
  ToolRun verified = run_tool({"ssh-keygen", "-Y", "verify", "-f", "/dev/fd/3", "-I", principal,
                               "-n", "moontrace", "-s", "/dev/fd/4"},
                              bytes, handed);
  stop_if_signalled_before_tracing();
  if (verified.status != 0)
    throw Error("refusing to run " + path + ": its signature " + sig + " does not verify (" +
                first_line(verified.errors + verified.output) + ")");
}

}  // namespace

Package load_package(const std::string &path, const std::string &expected_sha256,
                     const std::string &signers) {
  UniqueFd fd = open_trusted_file(path, script_owners());
  std::string bytes = read_whole_file(fd.get(), path);
  if (!expected_sha256.empty()) {
    std::string actual = sha256_hex(bytes);
    if (actual != expected_sha256)
      throw Error("refusing to run " + path + ": its sha256 is " + actual + ", not " +
                  expected_sha256 + " (--expect-digest)");
  }
  if (!signers.empty())
    verify_signature(path, bytes, signers);
  return decode_package(bytes, path);
}

SandboxOptions package_sandbox(const Package &package, bool unsafe) {
  SandboxOptions sandbox{unsafe, {}};
  sandbox.from_package = true;
  sandbox.packaged_modules = package.modules;
  return sandbox;
}

std::vector<char> object_from_package(const GeneratedProgram &generated, const Package &package,
                                      const std::string &path) {
  std::string key = ObjectCache::portable_key_for(generated.source, compile_options_for(generated));
  auto found = package.objects.find(key);
  if (found == package.objects.end()) {
    std::string kernels;
    for (const auto &k : package.kernels)
      kernels += (kernels.empty() ? "" : "; ") + shown(k);
    throw Error(path + " has no object for this kernel with these options (it was packed for " +
                kernels +
                "): pack it again on this kernel, or with --btf for it, and the options "
                "you run it with");
  }
  return {found->second.begin(), found->second.end()};
}

namespace {

std::string file_name(const std::string &path) {
  return path.substr(path.rfind('/') + 1);
}

// MAKE's object, made by a child process: LLVM 19 cannot compile twice in
// one process (its BPF back end keeps CO-RE state of a module after it is
// gone), and a package holds several. The child says its own error (then
// ReportedFailure); a stop signal stops both.
std::vector<char> made_in_child(const std::function<std::vector<char>()> &make) {
  ForkedChild child([&] {
    try {
      std::vector<char> object = make();
      return std::string(object.begin(), object.end());
    } catch (const Error &e) {
      std::fprintf(stderr, "moontrace: %s\n", e.located().c_str());
      for (const auto &line : e.more_lines)
        std::fprintf(stderr, "moontrace: %s\n", line.c_str());
      throw ForkedChild::ExitStatus{1};
    } catch (const StoppedBeforeTracing &stopped) {
      throw ForkedChild::ExitStatus{128 + stopped.signal};
    } catch (const std::exception &e) {
      std::fprintf(stderr, "moontrace: cannot compile: %s\n", e.what());
      throw ForkedChild::ExitStatus{1};
    }
  });
  ForkedChild::Ended ended = child.wait(stop_if_signalled_before_tracing);
  stop_if_signalled_before_tracing();
  if (ended.status == 1)
    throw ReportedFailure{};  // the child said why
  if (ended.status != 0)
    throw Error("the process compiling for the package died (status " +
                std::to_string(ended.status) + ")");
  return {ended.output.begin(), ended.output.end()};
}

}  // namespace

int run_pack(const Options &options) {
  if (options.script.ends_with(".mtpkg"))
    throw Error("pack takes a script, not a package: " + options.script);
  if (!options.output.empty() && !options.output.ends_with(".mtpkg"))
    throw Error("pack -o " + options.output + ": a package's name ends in .mtpkg");
  ScriptSource found = load_script_source(options.script);
  Package package;
  package.script_name = file_name(found.path);
  package.script = found.text;
  // Declared under the name the package gives it, its modules too: the C
  // generated here is then the C a run of the package generates.
  std::vector<std::string> module_dirs = module_dirs_for(found.path);
  std::vector<std::string> targets = {""};
  targets.insert(targets.end(), options.pack_btf.begin(), options.pack_btf.end());
  for (const auto &target : targets) {
    std::unique_ptr<KernelFacts> kernel =
        target.empty() ? std::make_unique<KernelFacts>() : std::make_unique<BtfFileFacts>(target);
    Output output;
    ScriptArgs args(options.script_args);
    SandboxOptions sandbox{options.unsafe, module_dirs};
    sandbox.packing = true;
    LuaScript script({package.script_name, package.script, false, {}}, sandbox, args, output);
    script.set_kernel_facts(kernel.get());
    script.declare({});
    args.check_all_used();
    const Declaration &decl = script.declaration();
    if (decl.probes.empty())
      throw Error(found.path + " declares no probe: there is nothing to pack");
    Resolution resolution = resolve_probes(decl, *kernel);
    // Run alone, and with -c or -p (which add a program that follows forks).
    Options followed = options;
    followed.command = "true";
    for (const Options *run_with : {&options, static_cast<const Options *>(&followed)}) {
      GeneratedProgram generated = generate_program(decl, resolution, *kernel, *run_with);
      std::vector<char> object = made_in_child(
          [&] { return compile_with_cache(generated, decl, options, script.source()); });
      if (!options.unsafe)
        check_tracing_only({object.data(), object.size()}, generated, decl);
      package.objects[ObjectCache::portable_key_for(generated.source,
                                                    compile_options_for(generated))] =
          std::string(object.begin(), object.end());
    }
    package.kernels.push_back(target.empty() ? "Linux " + kernel->release() + " (packed there)"
                                             : "the kernel of " + target);
    for (auto &[name, source] : script.file_modules())
      package.modules[name] = source;
  }
  std::string path =
      options.output.empty()
          ? package.script_name.substr(0, package.script_name.rfind(".lua")) + ".mtpkg"
          : options.output;
  std::string bytes = encode_package(package);
  decode_package(bytes, path);  // what was written reads back
  stop_if_signalled_before_tracing();
  OutputFile out = OutputFile::open(path);
  if (!write_all(out.fd(), bytes))
    throw Error("cannot write " + path + ": " + std::strerror(errno));
  if (int err = out.close())
    throw Error("cannot write " + path + ": " + std::strerror(err));
  stop_if_signalled_before_tracing();
  out.commit();
  std::printf(
      "packed %s: objects for %zu kernel%s (each run alone and with -c or -p), "
      "%zu module%s\nsha256 %s\n",
      path.c_str(), package.kernels.size(), package.kernels.size() == 1 ? "" : "s",
      package.modules.size(), package.modules.size() == 1 ? "" : "s", sha256_hex(bytes).c_str());
  return 0;
}

}  // namespace mt
