// Packs a script with its modules and objects; reads a package back and finds its object.
#include "app/package_step.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>

#include "app/compile_step.h"
#include "common/error.h"
#include "common/sha256.h"
#include "common/trusted_path.h"
#include "compiler/object_cache.h"
#include "compiler/tracing_policy.h"
#include "kernel/btf_file_facts.h"
#include "output/output.h"
#include "output/output_file.h"
#include "script/lua_sandbox.h"
#include "script/lua_script.h"
#include "script/script_params.h"

namespace mt {

Package load_package(const std::string &path, const std::string &expected_sha256) {
  UniqueFd fd = open_trusted_file(path, script_owners());
  std::string bytes = read_whole_file(fd.get(), path);
  if (!expected_sha256.empty()) {
    std::string actual = sha256_hex(bytes);
    if (actual != expected_sha256)
      throw Error("refusing to run " + path + ": its sha256 is " + actual + ", not " +
                  expected_sha256 + " (--expect-digest)");
  }
  return decode_package(bytes, path);
}

std::vector<char> object_from_package(const GeneratedProgram &generated, const Package &package,
                                      const std::string &path) {
  std::string key = ObjectCache::portable_key_for(generated.source, compile_options_for(generated));
  auto found = package.objects.find(key);
  if (found == package.objects.end()) {
    std::string kernels;
    for (const auto &k : package.kernels)
      kernels += (kernels.empty() ? "" : "; ") + k;
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
// gone), and a package holds several. The child says its own error; then
// moontrace exits 1.
std::vector<char> made_in_child(const std::function<std::vector<char>()> &make) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw Error(std::string("cannot compile: pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0)
    throw Error(std::string("cannot compile: fork: ") + std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    try {
      std::vector<char> object = make();
      for (size_t at = 0; at < object.size();) {
        ssize_t n = write(fds[1], object.data() + at, object.size() - at);
        if (n <= 0 && errno != EINTR)
          _exit(1);
        at += n > 0 ? static_cast<size_t>(n) : 0;
      }
      _exit(0);
    } catch (const Error &e) {
      std::fprintf(stderr, "moontrace: %s\n", e.located().c_str());
      for (const auto &line : e.more_lines)
        std::fprintf(stderr, "moontrace: %s\n", line.c_str());
    } catch (...) {
    }
    _exit(1);
  }
  close(fds[1]);
  std::vector<char> object;
  char buffer[65536];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      break;
    object.insert(object.end(), buffer, buffer + n);
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    std::exit(1);
  return object;
}

}  // namespace

int run_pack(const Options &options) {
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
    SandboxOptions sandbox{options.unsafe, module_dirs, {}, true};
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
  OutputFile out = OutputFile::open(path);
  for (size_t at = 0; at < bytes.size();) {
    ssize_t n = write(out.fd(), bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      throw Error("cannot write " + path + ": " + std::strerror(errno));
    at += static_cast<size_t>(n);
  }
  if (int err = out.close())
    throw Error("cannot write " + path + ": " + std::strerror(err));
  out.commit();
  std::printf(
      "packed %s: objects for %zu kernel%s (each run alone and with -c or -p), "
      "%zu module%s\nsha256 %s\n",
      path.c_str(), package.kernels.size(), package.kernels.size() == 1 ? "" : "s",
      package.modules.size(), package.modules.size() == 1 ? "" : "s", sha256_hex(bytes).c_str());
  return 0;
}

}  // namespace mt
