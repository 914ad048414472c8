// Finds user stack frames' binaries by build id and has the functions in
// them named.
#include "run/user_symbols.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cinttypes>
#include <fstream>

#include "common/printable.h"
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

std::string debug_file(const std::string &build_id) {
  return "/usr/lib/debug/.build-id/" + build_id.substr(0, 2) + "/" + build_id.substr(2) + ".debug";
}

}  // namespace

void UserSymbols::remember_process(uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  if (!in)
    return;  // gone: what was read of it before stays
  std::vector<Source> mappings;
  for (std::string line; std::getline(in, line);) {
    Source m;
    unsigned major = 0, minor = 0;
    uint64_t inode = 0;
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %x:%x %" SCNu64 " %n",
                    &m.map_start, &m.map_end, &m.offset, &major, &minor, &inode, &path_at) < 6 ||
        path_at <= 0 || line[path_at] != '/' || inode == 0)
      continue;
    m.path = line.substr(path_at);
    m.pid = pid;
    m.dev = makedev(major, minor);
    m.ino = static_cast<ino_t>(inode);
    file(m);
    mappings.push_back(std::move(m));
  }
  processes_[pid] = std::move(mappings);
}

void UserSymbols::remember_file(const std::string &path) {
  file(Source{path});
}

UniqueFd UserSymbols::open(const Source &source, struct stat *st) const {
  if (!source.pid)
    return open_regular_file(source.path, st);
  // The mapped file itself, then (the process gone) its path, each only
  // when it is the file the mapping named.
  char map_file[64];
  std::snprintf(map_file, sizeof map_file, "/proc/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64,
                source.pid, source.map_start, source.map_end);
  for (const std::string &path : {std::string(map_file), source.path}) {
    UniqueFd fd = open_regular_file(path, st);
    if (fd && st->st_dev == source.dev && st->st_ino == source.ino)
      return fd;
  }
  return {};
}

const UserSymbols::File *UserSymbols::file(const Source &source) {
  if (source.pid) {
    if (auto it = files_.find({source.dev, source.ino}); it != files_.end())
      return &it->second;
  } else if (not_found_.count(source.path)) {
    return nullptr;
  }
  struct stat st {};
  UniqueFd fd = open(source, &st);
  auto facts = fd ? read_elf_file_facts(fd.get()) : std::nullopt;
  if (!facts) {
    if (!source.pid)
      not_found_.insert(source.path);
    return nullptr;
  }
  auto [it, fresh] = files_.try_emplace({st.st_dev, st.st_ino});
  if (fresh) {
    std::string id = facts->build_id.empty() ? "" : as_kernel_gives_it(facts->build_id);
    it->second = File{source, st.st_dev, st.st_ino, std::move(*facts), id};
    if (!id.empty())
      by_build_id_.try_emplace(id, Identity{st.st_dev, st.st_ino});
  }
  return &it->second;
}

const UserSymbols::File *UserSymbols::find(uint32_t pid, const std::string &build_id) {
  // The stack's own process's file first: another process may map a file
  // that claims the same build id.
  auto own = [&]() -> const File * {
    for (const auto &m : processes_[pid])
      if (const File *f = file(m); f && f->build_id == build_id)
        return f;
    return nullptr;
  };
  auto known = [&]() -> const File * {
    auto it = by_build_id_.find(build_id);
    return it == by_build_id_.end() ? nullptr : &files_.at(it->second);
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
    file(Source{debug_file(id)});
  return known();
}

std::vector<std::string> UserSymbols::symbolize(const File &f, uint64_t offset) {
  auto address = f.facts.address_of(offset);
  std::vector<std::string> names;
  // Its debug file first, where one is installed: a binary's own symbols
  // leave out its static functions.
  std::vector<Source> sources = {f.source};
  if (const std::string &id = f.facts.build_id; id.size() > 2)
    sources.insert(sources.begin(), Source{debug_file(id)});
  for (const Source &source : sources) {
    // Opened and checked now: the path may name another file since.
    struct stat st {};
    UniqueFd fd = address ? open(source, &st) : UniqueFd();
    auto now = fd ? read_elf_file_facts(fd.get()) : std::nullopt;
    if (!now || now->build_id != f.facts.build_id)
      continue;
    std::string key = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
    if (auto named = symbolizer_.symbolize(fd.get(), key, {*address}))
      for (const auto &name : (*named)[0])
        names.push_back(printable(name));
    if (!names.empty())
      break;
  }
  if (names.empty())
    names.push_back("[" + printable(f.source.path) + "+" + hex(offset) + "]");
  return names;
}

std::vector<std::string> UserSymbols::frames(uint32_t pid, const std::string &build_id,
                                             uint64_t offset) {
  const File *f = find(pid, build_id);
  // An unknown binary is left for a later stack: it may be found then.
  if (!f)
    return {"[" + build_id.substr(0, 16) + "+" + hex(offset) + "]"};
  auto key = std::make_tuple(f->dev, f->ino, offset);
  if (auto it = named_.find(key); it != named_.end())
    return it->second;
  return named_[key] = symbolize(*f, offset);
}

std::vector<std::string> UserSymbols::frames_at(uint32_t pid, uint64_t address) {
  // Mappings read before may be stale (a library loaded since): read again once.
  for (int attempt = 0; attempt < 2; attempt++) {
    if (attempt || !processes_.count(pid))
      remember_process(pid);
    for (const auto &m : processes_[pid]) {
      if (address < m.map_start || address >= m.map_end)
        continue;
      uint64_t offset = address - m.map_start + m.offset;
      const File *f = file(m);
      if (f && !f->build_id.empty())
        return frames(pid, f->build_id, offset);
      if (f)
        return symbolize(*f, offset);
    }
  }
  return {hex(address)};
}

}  // namespace mt
