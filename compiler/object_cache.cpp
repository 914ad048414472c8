#include "compiler/object_cache.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "compiler/embedded_files.h"
#include "compiler/hash.h"

namespace mt {

std::string ObjectCache::default_directory() {
  if (const char *dir = std::getenv("MOONTRACE_CACHE"))
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"))
    return std::string(xdg) + "/moontrace";
  const char *home = std::getenv("HOME");
  return std::string(home ? home : "/tmp") + "/.cache/moontrace";
}

std::string ObjectCache::key_for(const std::string &c_source) {
  // The kernel's BTF changes with the kernel build; its size, time and the
  // kernel's version string identify it without reading megabytes.
  struct utsname uts;
  uname(&uts);
  struct stat st {};
  stat("/sys/kernel/btf/vmlinux", &st);
  ContentHash hash;
  hash.add(c_source).add(uts.release).add(uts.version).add(std::to_string(st.st_size));
  hash.add(MT_VERSION);
  for (const auto &header : kBpfHeaders)
    hash.add(header.name).add(header.content);
  return hash.hex();
}

std::optional<std::vector<char>> ObjectCache::load(const std::string &key) const {
  std::ifstream in(dir_ + "/" + key + ".o", std::ios::binary);
  if (!in)
    return std::nullopt;
  std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.size() < 4 || data[0] != 0x7f || data[1] != 'E')
    return std::nullopt;
  return data;
}

void ObjectCache::store(const std::string &key, const std::vector<char> &object) const {
  for (size_t pos = 1; pos != std::string::npos;) {
    pos = dir_.find('/', pos + 1);
    mkdir(dir_.substr(0, pos).c_str(), 0755);
  }
  // Write then rename, so a concurrent reader never sees half a file.
  std::string tmp = dir_ + "/" + key + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(object.data(), static_cast<std::streamsize>(object.size()));
    if (!out)
      return (void)unlink(tmp.c_str());
  }
  rename(tmp.c_str(), (dir_ + "/" + key + ".o").c_str());
}

}  // namespace mt
