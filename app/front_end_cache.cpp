// Keeps kernel answers and generated C between starts, keyed by all they depend on.
#include "app/front_end_cache.h"

#include <sys/stat.h>
#include <sys/utsname.h>

#include <algorithm>
#include <fstream>

#include "common/declaration_fingerprint.h"
#include "common/error.h"
#include "common/field_codec.h"
#include "common/hash.h"
#include "kernel/probe_name.h"

namespace mt {

namespace {

constexpr const char *kAnswersFormat = "kernel answers 1";
constexpr const char *kGeneratedFormat = "generated program 1";

void add_file_identity(FieldWriter &w, const char *path) {
  struct stat st {};
  stat(path, &st);
  w.num(st.st_dev).num(st.st_ino).num(st.st_size).num(st.st_mtim.tv_sec).num(st.st_mtim.tv_nsec);
}

std::vector<char> bytes_of(const std::string &text) {
  return std::vector<char>(text.begin(), text.end());
}

}  // namespace

// This engine's build and the running kernel: its build, and the modules
// loaded (each may bring probes and types).
std::string FrontEndCache::identity(const IdentityFiles &files) {
  FieldWriter w;
  w.str(MT_VERSION);
  add_file_identity(w, files.engine.c_str());
  struct utsname uts {};
  uname(&uts);
  w.str(uts.release).str(uts.version);
  add_file_identity(w, files.kernel_btf.c_str());
  std::vector<std::string> modules;
  std::ifstream listed(files.modules);
  for (std::string line; std::getline(listed, line);)
    modules.push_back(line.substr(0, line.find(' ')));
  std::sort(modules.begin(), modules.end());
  w.strs(modules);
  return w.bytes();
}

FrontEndCache::FrontEndCache(std::string directory, bool enabled, const IdentityFiles &files)
    : store_(std::move(directory), ".front"), enabled_(enabled) {
  if (enabled_)
    identity_ = identity(files);
}

std::string FrontEndCache::key(const std::string &what) const {
  return ContentHash().add(identity_).add(what).hex();
}

KernelAnswers::Answers FrontEndCache::answers() const {
  KernelAnswers::Answers answers;
  if (!enabled_)
    return answers;
  auto bytes = store_.load(key(kAnswersFormat));
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
  const GeneratedProgram &g = generated.program;
  FieldWriter w;
  w.str(g.source).str(g.params_struct).str(g.follow_program).str(g.flush_program);
  w.strs(g.naming_programs).num(static_cast<int64_t>(g.built_expressions.size()));
  for (const auto &[at, text] : g.built_expressions)
    w.str(at.first).num(at.second).str(text);
  w.num(static_cast<int64_t>(g.probes.size()));
  for (const auto &p : g.probes)
    w.num(p.decl_id).str(p.program).str(p.attached_program).str(p.record).str(p.probe_name);
  w.num(static_cast<int64_t>(generated.user.size()));
  for (const auto &u : generated.user)
    w.num(u.decl_id).str(u.name.to_string());
  w.strs(generated.notes);
  return w.bytes();
}

FrontEndCache::Generated FrontEndCache::decode(const std::string &bytes) {
  Generated generated;
  GeneratedProgram &g = generated.program;
  FieldReader r(bytes);
  g.source = r.str();
  g.params_struct = r.str();
  g.follow_program = r.str();
  g.flush_program = r.str();
  g.naming_programs = r.strs();
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
  if (!enabled_)
    return std::nullopt;
  std::string what =
      std::string(kGeneratedFormat) + (filter ? " filtered " : " ") + declaration_fingerprint(decl);
  auto bytes = store_.load(key(what));
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
  if (!enabled_)
    return;
  std::string what =
      std::string(kGeneratedFormat) + (filter ? " filtered " : " ") + declaration_fingerprint(decl);
  store_.store(key(what), bytes_of(encode(generated)));
}

}  // namespace mt
