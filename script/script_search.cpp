// Finds scripts by name along the search path and reads what they say of themselves, without
// running them.
#include "script/script_search.h"

#include <dirent.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>

#include "common/embedded_files.h"
#include "common/error.h"
#include "common/trusted_path.h"
#include "script/lua_sandbox.h"
#include "script/script_file.h"

namespace mt {

namespace {

// The home directory of the invoking user: the sudo user's under sudo.
std::string invoking_home() {
  uid_t uid = sudo_user() ? sudo_user()->first : geteuid();
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found && found->pw_dir)
    return found->pw_dir;
  return "";
}

// A string field of the script{} call that starts a line of `text`, read
// as text (the script is not run to list it): FIELD = "..." or '...' on
// one line, escapes kept as written; "" when there is none.
std::string script_field(const std::string &text, const std::string &field) {
  size_t call = text.rfind("script{", 0) == 0 ? 0 : text.find("\nscript{");
  if (call == std::string::npos)
    return "";
  std::string body = text.substr(call, 4096);
  for (size_t at = body.find(field); at != std::string::npos; at = body.find(field, at + 1)) {
    bool starts = at == 0 || !(std::isalnum((unsigned char)body[at - 1]) || body[at - 1] == '_');
    size_t i = at + field.size();
    while (i < body.size() && body[i] == ' ')
      i++;
    if (!starts || i >= body.size() || body[i] != '=')
      continue;
    i = body.find_first_not_of(' ', i + 1);
    if (i == std::string::npos || (body[i] != '"' && body[i] != '\''))
      continue;
    char quote = body[i];
    std::string value;
    for (size_t j = i + 1; j < body.size() && body[j] != '\n' && value.size() < 200; j++) {
      if (body[j] == quote)
        return value;
      value += body[j];
      if (body[j] == '\\' && j + 1 < body.size())
        value += body[++j];
    }
    return "";
  }
  return "";
}

// "-- uring: what it does" -> "what it does".
std::string first_comment(const std::string &text, const std::string &name) {
  std::string first = text.substr(0, text.find('\n'));
  if (first.rfind("--", 0) != 0)
    return "";
  first = first.substr(std::min(first.size(), first.find_first_not_of("- ")));
  if (first.rfind(name + ": ", 0) == 0)
    first = first.substr(name.size() + 2);
  return first;
}

FoundScript described(FoundScript f, const std::string &text) {
  f.version = script_field(text, "version");
  f.description = script_field(text, "description");
  if (f.description.empty())
    f.description = first_comment(text, f.name);
  return f;
}

// The script NAME in directory DIR, if it is there and may be read.
std::optional<FoundScript> in_dir(const std::string &dir, const std::string &name) {
  std::string path = dir + "/" + name + ".lua";
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || S_ISDIR(st.st_mode))
    return std::nullopt;
  FoundScript f{name, path};
  try {
    if (auto text = read_script_file(path))
      return described(f, *text);
  } catch (const Error &) {
    // Listed, so that the refusal is heard when it is run.
  }
  return f;
}

}  // namespace

std::vector<std::string> moontrace_path() {
  std::vector<std::string> dirs;
  if (const char *path = std::getenv("MOONTRACE_PATH")) {
    std::string all = path;
    for (size_t start = 0; start <= all.size();) {
      size_t colon = std::min(all.find(':', start), all.size());
      if (colon > start)
        dirs.push_back(all.substr(start, colon - start));
      start = colon + 1;
    }
  }
  return dirs;
}

std::vector<std::string> script_dirs() {
  std::vector<std::string> dirs = moontrace_path();
  if (std::string home = invoking_home(); !home.empty())
    dirs.push_back(home + "/.config/moontrace/scripts");
  dirs.push_back("/etc/moontrace/scripts");
  return dirs;
}

std::vector<FoundScript> find_scripts(const std::string &name) {
  std::vector<FoundScript> found;
  for (const auto &dir : script_dirs())
    if (auto f = in_dir(dir, name))
      found.push_back(*f);
  if (const char *text = embedded_lua(name + ".lua", kScriptFiles))
    found.push_back(described({name, "scripts/" + name + ".lua", true}, text));
  return found;
}

std::vector<FoundScript> all_scripts() {
  std::vector<std::string> names;
  for (const auto &dir : script_dirs())
    if (DIR *d = opendir(dir.c_str())) {
      while (dirent *e = readdir(d)) {
        std::string file = e->d_name;
        if (file.size() > 4 && file.compare(file.size() - 4, 4, ".lua") == 0 && file[0] != '.')
          names.push_back(file.substr(0, file.size() - 4));
      }
      closedir(d);
    }
  for (const auto &f : kScriptFiles)
    names.push_back(std::string(f.name).substr(0, std::string(f.name).size() - 4));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::vector<FoundScript> all;
  for (const auto &name : names)
    for (auto &f : find_scripts(name))
      all.push_back(std::move(f));
  return all;
}

}  // namespace mt
