// Finds user stack frames' binaries by build id and has the functions in
// them named.
#include "run/user_symbols.h"

#include <dirent.h>

#include <cinttypes>
#include <fstream>

#include "common/regular_file.h"

namespace mt {

namespace {

constexpr size_t kKernelBuildIdDigits = 40;  // BPF_BUILD_ID_SIZE bytes

std::string hex(uint64_t n) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, n);
  return text;
}

// A file's build id as the kernel gives it: cut or zero-padded to 20 bytes.
std::string as_kernel_gives_it(std::string build_id) {
  build_id.resize(kKernelBuildIdDigits, '0');
  return build_id;
}

// A name from a binary, printed as it is: what could drive a terminal or
// break a line of output is not.
std::string printable(std::string name) {
  for (char &c : name)
    if (static_cast<unsigned char>(c) < 32 || c == 127)
      c = '?';
  return name;
}

}  // namespace

void UserSymbols::remember_process(uint32_t pid) {
  std::vector<Mapping> &mappings = processes_[pid];
  mappings.clear();
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(in, line);) {
    Mapping m;
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &m.start,
                    &m.end, &m.offset, &path_at) < 3 ||
        path_at <= 0 || line[path_at] != '/' || line.ends_with(" (deleted)"))
      continue;
    m.path = line.substr(path_at);
    file(m.path);
    mappings.push_back(std::move(m));
  }
}

void UserSymbols::remember_file(const std::string &path) {
  file(path);
}

const UserSymbols::File *UserSymbols::file(const std::string &path) {
  if (auto it = files_.find(path); it != files_.end())
    return &it->second;
  if (not_elf_.count(path))
    return nullptr;
  UniqueFd fd = open_regular_file(path);
  auto facts = fd ? read_elf_file_facts(fd.get()) : std::nullopt;
  if (!facts) {
    not_elf_.insert(path);
    return nullptr;
  }
  std::string build_id = facts->build_id.empty() ? "" : as_kernel_gives_it(facts->build_id);
  const File &f = files_[path] = File{path, std::move(*facts), build_id};
  if (!build_id.empty())
    by_build_id_.try_emplace(build_id, path);
  return &f;
}

const UserSymbols::File *UserSymbols::find(uint32_t pid, const std::string &build_id) {
  // The stack's own process's file first: another process may map a file
  // that claims the same build id.
  auto own = [&]() -> const File * {
    for (const auto &m : processes_[pid])
      if (const File *f = file(m.path); f && f->build_id == build_id)
        return f;
    return nullptr;
  };
  auto known = [&]() -> const File * {
    auto it = by_build_id_.find(build_id);
    return it == by_build_id_.end() ? nullptr : file(it->second);
  };
  if (const File *f = own())
    return f;
  remember_process(pid);
  if (const File *f = own(); f || (f = known()))
    return f;
  // A binary of a process that has exited: maybe another still maps it
  // (at most one look at every process a second), or its debug file is
  // installed.
  auto now = std::chrono::steady_clock::now();
  if (now - last_scan_ > std::chrono::seconds(1)) {
    last_scan_ = now;
    if (DIR *proc = opendir("/proc")) {
      while (struct dirent *e = readdir(proc))
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
            !processes_.count(std::strtoul(e->d_name, nullptr, 10)))
          remember_process(static_cast<uint32_t>(std::strtoul(e->d_name, nullptr, 10)));
      closedir(proc);
    }
    if (const File *f = known())
      return f;
  }
  // Debug files are named by the whole id, which the kernel may have cut
  // or padded: tried as given, and without the padding.
  std::string unpadded = build_id;
  while (unpadded.size() > 2 && unpadded.ends_with("00"))
    unpadded.resize(unpadded.size() - 2);
  for (const std::string &id : {build_id, unpadded})
    file("/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug");
  return known();
}

std::vector<std::string> UserSymbols::symbolize(const File &f, uint64_t offset) {
  auto address = f.facts.address_of(offset);
  std::vector<std::string> names;
  // Its debug file first, where one is installed: a binary's own symbols
  // leave out its static functions.
  std::vector<std::string> paths = {f.path};
  if (const std::string &id = f.facts.build_id; id.size() > 2)
    paths.insert(paths.begin(),
                 "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug");
  for (const std::string &path : paths) {
    // Opened and checked now: the path may name another file since.
    UniqueFd fd = address ? open_regular_file(path) : UniqueFd();
    auto now = fd ? read_elf_file_facts(fd.get()) : std::nullopt;
    if (!now || now->build_id != f.facts.build_id)
      continue;
    std::string key = (f.build_id.empty() ? f.path : f.build_id) + (path == f.path ? "" : ".debug");
    if (auto named = symbolizer_.symbolize(fd.get(), key, {*address}))
      for (const auto &name : (*named)[0])
        names.push_back(printable(name));
    if (!names.empty())
      break;
  }
  if (names.empty())
    names.push_back("[" + printable(f.path) + "+" + hex(offset) + "]");
  return names;
}

std::vector<std::string> UserSymbols::frames(uint32_t pid, const std::string &build_id,
                                             uint64_t offset) {
  auto key = std::make_pair(build_id, offset);
  if (auto it = named_.find(key); it != named_.end())
    return it->second;
  const File *f = find(pid, build_id);
  // An unknown binary is left for a later stack: it may be found then.
  if (!f)
    return {"[" + build_id.substr(0, 16) + "+" + hex(offset) + "]"};
  return named_[key] = symbolize(*f, offset);
}

std::vector<std::string> UserSymbols::frames_at(uint32_t pid, uint64_t address) {
  // Mappings read before may be stale (a library loaded since): read again once.
  for (int attempt = 0; attempt < 2; attempt++) {
    if (attempt || !processes_.count(pid))
      remember_process(pid);
    for (const auto &m : processes_[pid]) {
      if (address < m.start || address >= m.end)
        continue;
      uint64_t offset = address - m.start + m.offset;
      const File *f = file(m.path);
      if (f && !f->build_id.empty())
        return frames(pid, f->build_id, offset);
      if (f)
        return symbolize(*f, offset);
    }
  }
  return {hex(address)};
}

}  // namespace mt
