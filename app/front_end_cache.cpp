// Keeps kernel answers and generated C between starts, keyed by all they depend on.
#include "app/front_end_cache.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "common/declaration_fingerprint.h"
#include "common/error.h"
#include "common/field_codec.h"
#include "common/sha256.h"
#include "kernel/probe_name.h"

namespace mt {

namespace {

constexpr const char *kAnswersFormat = "kernel answers 1";
constexpr const char *kGeneratedFormat = "generated program 2";
constexpr const char *kObjectExpectedFormat = "object expected 1 ";

std::vector<char> bytes_of(const std::string &text) {
  return std::vector<char>(text.begin(), text.end());
}

// Whether DECL's C may be kept: none of its probes is on a file.
bool keepable(const Declaration &decl) {
  for (const auto &p : decl.probes)
    if (any_names_a_file(p.alternatives))
      return false;
  return true;
}

// The lines of a file, or nothing when it cannot be read; a file that
// is not there is empty.
std::optional<std::vector<std::string>> lines_of(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    return access(path.c_str(), F_OK) != 0 && errno == ENOENT
               ? std::optional(std::vector<std::string>{})
               : std::nullopt;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

}  // namespace

std::optional<std::string> FrontEndCache::identity(const IdentityFiles &files) {
  FieldWriter w;
  // The engine's build: its file, replaced by every build.
  struct stat st {};
  if (stat(files.engine.c_str(), &st) != 0)
    return std::nullopt;
  w.str(MT_VERSION).num(st.st_dev).num(st.st_ino).num(st.st_size).num(st.st_mtim.tv_sec);
  w.num(st.st_mtim.tv_nsec);
  // The kernel's build (its version string holds the build's date), its
  // BTF's size (as the object cache's key: its time changes every boot),
  // and each module loaded: name, size and state.
  struct utsname uts {};
  uname(&uts);
  w.str(uts.release).str(uts.version);
  w.num(stat(files.kernel_btf.c_str(), &st) == 0 ? st.st_size : -1);
  // And its build id, among the ELF notes it was linked with: the C keeps
  // kernel structs at their offsets in that very build.
  auto notes = lines_of(files.kernel_notes);
  if (!notes)
    return std::nullopt;
  w.strs(*notes);
  auto modules = lines_of(files.modules);
  if (!modules)
    return std::nullopt;
  for (auto &line : *modules) {
    std::istringstream fields(line);
    std::string name, size, uses, by, state;
    fields >> name >> size >> uses >> by >> state;
    line = name + " " + size + " " + state;
  }
  std::sort(modules->begin(), modules->end());
  w.strs(*modules);
  // What this user may see of the kernel: answers differ without
  // tracefs, or without the capabilities to load a test program.
  auto status = lines_of(files.status);
  if (!status)
    return std::nullopt;
  for (const auto &line : *status)
    if (line.starts_with("CapEff:"))
      w.str(line);
  w.num(geteuid());
  w.num(access("/sys/kernel/tracing/events", R_OK | X_OK) == 0 ||
        access("/sys/kernel/debug/tracing/events", R_OK | X_OK) == 0);
  return w.bytes();
}

FrontEndCache::FrontEndCache(std::string directory, bool enabled, const IdentityFiles &files)
    : store_(std::move(directory), ".front") {
  if (!enabled)
    return;
  auto found = identity(files);
  enabled_ = found.has_value();
  identity_ = found.value_or("");
}

std::string FrontEndCache::key(const std::string &what) const {
  return sha256_hex(FieldWriter().str(identity_).str(what).bytes());
}

std::optional<std::vector<char>> FrontEndCache::load(const std::string &what) const {
  if (!enabled_)
    return std::nullopt;
  try {
    return store_.load(key(what));
  } catch (const Error &) {
    return std::nullopt;  // a cache not to be trusted is not used; compiling says why
  }
}

std::string FrontEndCache::generated_key(const Declaration &decl, bool filter) {
  return std::string(kGeneratedFormat) + (filter ? " filtered " : " ") +
         declaration_fingerprint(decl);
}

KernelAnswers::Answers FrontEndCache::answers() const {
  KernelAnswers::Answers answers;
  auto bytes = load(kAnswersFormat);
  if (!bytes)
    return answers;
  try {
    FieldReader r(std::string_view(bytes->data(), bytes->size()));
    for (int64_t n = r.num(); n > 0; n--) {
      std::string question = r.str();
      answers[question] = r.strs();
    }
  } catch (const Error &) {
    return {};  // damaged: asked again, and stored again
  }
  return answers;
}

void FrontEndCache::store_answers(const KernelAnswers::Answers &answers) const {
  if (!enabled_)
    return;
  FieldWriter w;
  w.num(static_cast<int64_t>(answers.size()));
  for (const auto &[question, answer] : answers)
    w.str(question).strs(answer);
  store_.store(key(kAnswersFormat), bytes_of(w.bytes()));
}

std::string FrontEndCache::encode(const Generated &generated) {
  // All the fields at once: one added to them does not build until it is
  // written here, and read in decode().
  const auto &[program, user, notes] = generated;
  const auto &[source, probes, params_struct, follow_programs, flush_program, naming_programs,
               announces_processes, uses_number_iterator, built_expressions] = program;
  FieldWriter w;
  w.str(source).str(params_struct).strs(follow_programs).str(flush_program);
  w.strs(naming_programs).num(announces_processes).num(uses_number_iterator);
  w.num(static_cast<int64_t>(built_expressions.size()));
  for (const auto &[at, text] : built_expressions)
    w.str(at.first).num(at.second).str(text);
  w.num(static_cast<int64_t>(probes.size()));
  for (const auto &p : probes) {
    const auto &[decl_id, function, attached_program, record, probe_name, name] = p;
    w.num(decl_id).str(function).str(attached_program).str(record).str(probe_name);
    (void)name;  // probe_name, parsed
  }
  w.num(static_cast<int64_t>(user.size()));
  for (const auto &u : user)
    w.num(u.decl_id).str(u.name.to_string());
  w.strs(notes);
  return w.bytes();
}

FrontEndCache::Generated FrontEndCache::decode(const std::string &bytes) {
  Generated generated;
  GeneratedProgram &g = generated.program;
  FieldReader r(bytes);
  g.source = r.str();
  g.params_struct = r.str();
  g.follow_programs = r.strs();
  g.flush_program = r.str();
  g.naming_programs = r.strs();
  g.announces_processes = r.num() != 0;
  g.uses_number_iterator = r.num() != 0;
  for (int64_t n = r.num(); n > 0; n--) {
    std::string file = r.str();
    int line = static_cast<int>(r.num());
    g.built_expressions[{file, line}] = r.str();
  }
  for (int64_t n = r.num(); n > 0; n--) {
    GeneratedProbe p;
    p.decl_id = static_cast<int>(r.num());
    p.program = r.str();
    p.attached_program = r.str();
    p.record = r.str();
    p.probe_name = r.str();
    p.name = parse_probe_name(p.probe_name);
    g.probes.push_back(std::move(p));
  }
  for (int64_t n = r.num(); n > 0; n--) {
    ResolvedProbe u;
    u.decl_id = static_cast<int>(r.num());
    u.name = parse_probe_name(r.str());
    generated.user.push_back(std::move(u));
  }
  generated.notes = r.strs();
  if (!r.done())
    throw Error("damaged cache entry (bytes after the end)");
  return generated;
}

std::optional<FrontEndCache::Generated> FrontEndCache::generated(const Declaration &decl,
                                                                 bool filter) const {
  auto bytes = keepable(decl) ? load(generated_key(decl, filter)) : std::nullopt;
  if (!bytes)
    return std::nullopt;
  try {
    Generated generated = decode(std::string(bytes->begin(), bytes->end()));
    auto outside = [&](int id) { return id < 0 || static_cast<size_t>(id) >= decl.probes.size(); };
    for (const auto &p : generated.program.probes)
      if (outside(p.decl_id))
        return std::nullopt;
    for (const auto &u : generated.user)
      if (outside(u.decl_id))
        return std::nullopt;
    return generated;
  } catch (const Error &) {
    return std::nullopt;  // damaged: generated again, and stored again
  }
}

void FrontEndCache::store_generated(const Declaration &decl, bool filter,
                                    const Generated &generated) const {
  if (enabled_ && keepable(decl))
    store_.store(key(generated_key(decl, filter)), bytes_of(encode(generated)));
}

std::optional<std::string> FrontEndCache::object_expected(const std::string &invocation) const {
  auto bytes = load(kObjectExpectedFormat + invocation);
  // A key names a file in the cache: hex digits only.
  if (!bytes || bytes->empty() || bytes->size() > 64 ||
      !std::all_of(bytes->begin(), bytes->end(), [](char c) { return std::isxdigit(c); }))
    return std::nullopt;
  return std::string(bytes->begin(), bytes->end());
}

void FrontEndCache::store_object_expected(const std::string &invocation,
                                          const std::string &object_key) const {
  if (enabled_ && object_expected(invocation) != object_key)
    store_.store(key(kObjectExpectedFormat + invocation), bytes_of(object_key));
}

}  // namespace mt
