// Writes and reads the entries of a package, checking each one's digest.
#include "common/package_file.h"

#include <cstdlib>

#include "common/error.h"
#include "common/hash.h"

namespace mt {

namespace {

constexpr const char *kMagic = "moontrace package 1\n";

std::string digest(const std::string &data) {
  return ContentHash().add(data).hex();
}

bool plain_name(const std::string &name);

void add(std::string &out, const std::string &kind, const std::string &name,
         const std::string &data) {
  if (!plain_name(name))
    throw Error("cannot pack '" + shown(name) + "': a packaged name has no spaces or control "
                "characters and at most 255 bytes");
  out += kind + " " + name + " " + std::to_string(data.size()) + " " + digest(data) + "\n";
  out += data + "\n";
}

}  // namespace

// TEXT from a package, fit for one line of a message: control characters
// as '?', at most 64 bytes.
std::string shown(const std::string &text) {
  std::string out = text.substr(0, 64);
  for (auto &c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      c = '?';
  return out;
}

namespace {

// Names go on a header line: printable, without spaces.
bool plain_name(const std::string &name) {
  if (name.empty() || name.size() > 255)
    return false;
  for (unsigned char c : name)
    if (c <= ' ' || c == 0x7f)
      return false;
  return true;
}

}  // namespace

std::string encode_package(const Package &package) {
  std::string out = kMagic;
  for (const auto &kernel : package.kernels)
    add(out, "meta", "kernel", kernel);
  add(out, "script", package.script_name, package.script);
  for (const auto &[name, source] : package.modules)
    add(out, "module", name, source);
  for (const auto &[key, object] : package.objects)
    add(out, "object", key, object);
  return out + "end\n";
}

Package decode_package(const std::string &bytes, const std::string &path) {
  auto damaged = [&](const std::string &why) {
    return Error(path + ": not a moontrace package, or a damaged one (" + why + ")");
  };
  std::string magic = kMagic;
  if (bytes.compare(0, magic.size(), magic) != 0)
    throw damaged("no package header");
  Package package;
  bool has_script = false;
  for (size_t at = magic.size();;) {
    size_t eol = bytes.find('\n', at);
    if (eol == std::string::npos || eol - at > 1024)
      throw damaged("an entry's header is cut");
    std::string line = bytes.substr(at, eol - at);
    at = eol + 1;
    if (line == "end") {
      if (at != bytes.size())
        throw damaged("bytes after its end");
      break;
    }
    // KIND NAME SIZE DIGEST
    size_t a = line.find(' '), b = line.find(' ', a + 1), c = line.find(' ', b + 1);
    if (c == std::string::npos)
      throw damaged("an entry's header is not KIND NAME SIZE DIGEST");
    std::string kind = line.substr(0, a), name = line.substr(a + 1, b - a - 1),
                size_text = line.substr(b + 1, c - b - 1), sum = line.substr(c + 1);
    char *end = nullptr;
    unsigned long long size = std::strtoull(size_text.c_str(), &end, 10);
    if (!plain_name(name) || size_text.empty() || *end || size > bytes.size() - at ||
        bytes.size() - at - size < 1 || bytes[at + size] != '\n')
      throw damaged("entry '" + shown(name) + "' is cut or malformed");
    std::string data = bytes.substr(at, size);
    at += size + 1;
    if (digest(data) != sum)
      throw damaged("entry '" + shown(name) + "' does not match its digest");
    if (kind == "meta" && name == "kernel")
      package.kernels.push_back(data);
    else if (kind == "script" && !has_script)
      package.script_name = name, package.script = data, has_script = true;
    else if (kind == "script")
      throw damaged("two scripts");
    else if (kind == "module" && package.modules.emplace(name, data).second)
      continue;
    else if (kind == "object" && package.objects.emplace(name, data).second)
      continue;
    else if (kind == "module" || kind == "object")
      throw damaged("two entries named '" + shown(name) + "'");
    else
      throw damaged("an entry of kind '" + shown(kind) + "'");
  }
  if (!has_script)
    throw damaged("no script");
  return package;
}

}  // namespace mt
