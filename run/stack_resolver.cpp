// Reads stacks from their maps and names their frames, kernel and user.
#include "run/stack_resolver.h"

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "bpf_headers/mt_abi.h"
#include "common/hex_digits.h"
#include "run/bpf_loader.h"
#include "run/child_process.h"
#include "run/record_decoder.h"

namespace mt {

namespace {

static_assert(sizeof(struct bpf_stack_build_id) == MT_STACK_BUILD_ID_FRAME_BYTES);

// Where execvp would find the command's program.
std::string program_of(const std::string &command) {
  auto words = split_command(command);
  if (words.empty() || words[0].find('/') != std::string::npos)
    return words.empty() ? "" : words[0];
  const char *path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (size_t at = 0; at <= dirs.size();) {
    size_t end = dirs.find(':', at);
    if (end == std::string::npos)
      end = dirs.size();
    std::string candidate = dirs.substr(at, end - at) + "/" + words[0];
    if (access(candidate.c_str(), X_OK) == 0)
      return candidate;
    at = end + 1;
  }
  return "";
}

}  // namespace

StackResolver::StackResolver(const BpfProgram &program, bool user_stacks,
                             const std::string &command, int pid)
    : program_(program), user_stacks_(user_stacks) {
  if (user_stacks) {
    if (std::string file = program_of(command); !file.empty())
      user_.remember_file(file);
    if (pid > 0)
      user_.remember_process(static_cast<uint32_t>(pid));
    user_.prepare();
  }
  set_stack_text([this](const std::string &map, uint64_t value) { return text(map, value); });
}

StackResolver::~StackResolver() {
  set_stack_text(nullptr);
}

void StackResolver::process_seen(const void *record, size_t size) {
  struct mt_thread_name named;
  if (size < sizeof named || !user_stacks_)
    return;
  std::memcpy(&named, record, sizeof named);
  user_.remember_process(named.pid);
}

size_t StackResolver::value_size(int fd) {
  auto [it, fresh] = value_sizes_.try_emplace(fd, 0);
  struct bpf_map_info info {};
  uint32_t length = sizeof info;
  if (fresh && bpf_obj_get_info_by_fd(fd, &info, &length) == 0)
    it->second = info.value_size;
  return it->second;
}

std::vector<std::string> StackResolver::kernel_frames(int fd, uint32_t id, int depth) {
  std::vector<uint64_t> ips(value_size(fd) / sizeof(uint64_t));
  if (ips.empty() || bpf_map_lookup_elem(fd, &id, ips.data()) != 0)
    return {"[stack gone from its map]"};
  if (!kernel_)
    kernel_ = KernelSymbols::load();
  std::vector<std::string> frames;
  for (uint64_t ip : ips) {
    if (!ip)
      break;
    std::string frame = kernel_->frame(ip);
    // A raw tracepoint's or fentry's stack starts in the program that took
    // it and the kernel's code that ran it: not what was traced.
    if (frames.empty() &&
        (frame.starts_with("bpf_prog_") || frame.starts_with("bpf_trace_run") ||
         frame.starts_with("__bpf_trace_") || frame.starts_with("bpf_trampoline_")))
      continue;
    if (frames.size() == static_cast<size_t>(depth))
      break;
    frames.push_back(std::move(frame));
  }
  return frames;
}

std::vector<std::string> StackResolver::user_frames(int fd, uint32_t pid, uint32_t id) {
  std::vector<struct bpf_stack_build_id> stack(value_size(fd) / sizeof(struct bpf_stack_build_id));
  if (stack.empty() || bpf_map_lookup_elem(fd, &id, stack.data()) != 0)
    return {"[stack gone from its map]"};
  std::vector<std::string> frames;
  for (const auto &frame : stack) {
    if (frame.status == BPF_STACK_BUILD_ID_EMPTY)
      break;
    auto named =
        frame.status == BPF_STACK_BUILD_ID_VALID
            ? user_.frames(pid, hex_digits(frame.build_id, BPF_BUILD_ID_SIZE), frame.offset)
            : user_.frames_at(pid, frame.ip);
    frames.insert(frames.end(), named.begin(), named.end());
  }
  return frames;
}

std::string StackResolver::text(const std::string &map, uint64_t value) {
  auto key = std::make_pair(map, value);
  if (auto it = texts_.find(key); it != texts_.end())
    return it->second;
  // The map's name says the kind and depth: mt_stack_k127.
  std::string kind_depth = map.substr(std::min(map.size(), std::strlen(MT_STACK_MAP_PREFIX)));
  bool user = kind_depth.starts_with("u");
  int depth = kind_depth.size() > 1 ? std::atoi(kind_depth.c_str() + 1) : 0;
  int fd = program_.map_fd(map);
  int32_t id = static_cast<int32_t>(value & 0xffffffff);
  std::vector<std::string> frames;
  if (fd < 0 || depth <= 0 || depth > MT_STACK_MAX_DEPTH)
    frames = {"[no map " + map + "]"};
  else if (id == -EEXIST)  // another stack had its slot in the map
    frames = {"[no stack: its slot in the map was taken]"};
  else if (id == -EFAULT)  // a kernel stack where none runs (a uprobe)
    frames = {"[no stack: none to walk]"};
  else if (id < 0 && id > -4096)
    frames = {std::string("[no stack: ") + std::strerror(-id) + "]"};
  else if (id < 0)
    frames = {"[no stack]"};
  else if (user)
    frames = user_frames(fd, static_cast<uint32_t>(value >> 32), static_cast<uint32_t>(id));
  else
    frames = kernel_frames(fd, static_cast<uint32_t>(id), depth);
  std::string text = "\n";
  for (const auto &f : frames)
    text += "        " + f + "\n";
  // An unknown user binary may be found later, when a process maps it.
  if (!user || text.find("\n        [") == std::string::npos)
    texts_[key] = text;
  return text;
}

}  // namespace mt
