// Finds user stack frames' binaries by build id and names the functions in them.
#include "run/user_symbols.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cinttypes>
#include <fstream>

#include "common/error.h"
#include "compiler/clang_compiler.h"

namespace mt {

namespace {

std::string hex(uint64_t n) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, n);
  return text;
}

// Files a process maps, from /proc/PID/maps; deleted ones left out.
template <typename Mapping>
std::vector<Mapping> read_mappings(uint32_t pid) {
  std::vector<Mapping> out;
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(in, line)) {
    Mapping m;
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &m.start,
                    &m.end, &m.offset, &path_at) < 3 ||
        path_at <= 0 || line[path_at] != '/' || line.ends_with(" (deleted)"))
      continue;
    m.path = line.substr(path_at);
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

void UserSymbols::remember_process(uint32_t pid) {
  if (processes_.count(pid))
    return;
  auto &mappings = processes_[pid] = read_mappings<Mapping>(pid);
  for (const auto &m : mappings)
    file(m.path);
}

void UserSymbols::remember_file(const std::string &path) {
  file(path);
}

UserSymbols::File *UserSymbols::file(const std::string &path) {
  auto [it, fresh] = files_.try_emplace(path);
  if (!fresh)
    return it->second.get();
  // Only a regular file is read, never blocking on a FIFO.
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (!fd || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    return nullptr;
  auto facts = read_elf_file_facts(fd.get());
  if (!facts)
    return nullptr;
  it->second = std::make_unique<File>(File{path, std::move(fd), std::move(*facts)});
  if (!it->second->facts.build_id.empty())
    by_build_id_.try_emplace(it->second->facts.build_id, it->second.get());
  return it->second.get();
}

UserSymbols::File *UserSymbols::find(uint32_t pid, const std::string &build_id) {
  auto known = [&]() -> File * {
    auto it = by_build_id_.find(build_id);
    return it == by_build_id_.end() ? nullptr : it->second;
  };
  if (File *f = known())
    return f;
  remember_process(pid);
  if (File *f = known())
    return f;
  // A binary of a process that has exited: maybe another still maps it
  // (at most one look at every process a second), or its debug file is
  // installed.
  auto now = std::chrono::steady_clock::now();
  if (now - last_scan_ > std::chrono::seconds(1)) {
    last_scan_ = now;
    if (DIR *proc = opendir("/proc")) {
      while (struct dirent *e = readdir(proc))
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
          for (const auto &m : read_mappings<Mapping>(std::strtoul(e->d_name, nullptr, 10)))
            file(m.path);
      closedir(proc);
    }
    if (File *f = known())
      return f;
  }
  if (build_id.size() > 2)
    file("/usr/lib/debug/.build-id/" + build_id.substr(0, 2) + "/" + build_id.substr(2) + ".debug");
  return known();
}

std::vector<std::string> UserSymbols::symbolize(File &file, uint64_t offset) {
  auto address = file.facts.address_of(offset);
  std::vector<std::string> names;
  if (address && !symbolizer_missing_) {
    try {
      names = symbolize_code("/proc/self/fd/" + std::to_string(file.fd.get()), {*address})[0];
    } catch (const Error &) {
      symbolizer_missing_ = true;  // no compiler library: files and offsets
    }
  }
  if (names.empty())
    names.push_back("[" + file.path + "+" + hex(offset) + "]");
  return names;
}

std::vector<std::string> UserSymbols::frames(uint32_t pid, const std::string &build_id,
                                             uint64_t offset) {
  auto key = std::make_pair(build_id, offset);
  if (auto it = named_.find(key); it != named_.end())
    return it->second;
  File *f = find(pid, build_id);
  // An unknown binary is left for a later stack: it may be found then.
  if (!f)
    return {"[" + build_id.substr(0, 16) + "+" + hex(offset) + "]"};
  return named_[key] = symbolize(*f, offset);
}

std::vector<std::string> UserSymbols::frames_at(uint32_t pid, uint64_t address) {
  remember_process(pid);
  for (const auto &m : processes_[pid]) {
    if (address < m.start || address >= m.end)
      continue;
    uint64_t offset = address - m.start + m.offset;
    File *f = file(m.path);
    if (f && !f->facts.build_id.empty())
      return frames(pid, f->facts.build_id, offset);
    if (f)
      return symbolize(*f, offset);
  }
  return {hex(address)};
}

}  // namespace mt
