// Links BPF objects in memory: libbpf 1.1's linker takes only file names,
// so each image is a memfd named by /proc/self/fd.
#include "compiler/object_linker.h"

#include <bpf/libbpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "common/error.h"
#include "common/write_all.h"
#include "kernel/libbpf_messages.h"

namespace mt {

namespace {

struct MemoryFile {
  int fd = -1;
  MemoryFile() : fd(memfd_create("moontrace-object", MFD_CLOEXEC)) {
    if (fd < 0)
      throw Error(std::string("cannot link the compiled parts: memfd_create: ") +
                  std::strerror(errno));
  }
  ~MemoryFile() { close(fd); }
  MemoryFile(const MemoryFile &) = delete;
  MemoryFile &operator=(const MemoryFile &) = delete;
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd); }
};

[[noreturn]] void fail(const std::string &what) {
  std::string why = libbpf_messages();
  while (!why.empty() && why.back() == '\n')
    why.pop_back();
  throw Error("cannot link the compiled parts: " + what + (why.empty() ? "" : ": " + why));
}

}  // namespace

std::vector<char> link_bpf_objects(const std::vector<std::vector<char>> &objects) {
  keep_libbpf_messages();
  libbpf_messages().clear();
  std::vector<std::unique_ptr<MemoryFile>> inputs;
  for (const auto &object : objects) {
    inputs.push_back(std::make_unique<MemoryFile>());
    if (!write_all(inputs.back()->fd, {object.data(), object.size()}))
      fail(std::string("write: ") + std::strerror(errno));
  }
  MemoryFile output;
  std::unique_ptr<bpf_linker, void (*)(bpf_linker *)> linker(
      bpf_linker__new(output.path().c_str(), nullptr), bpf_linker__free);
  if (!linker)
    fail("libbpf's linker did not start");
  for (const auto &input : inputs)
    if (bpf_linker__add_file(linker.get(), input->path().c_str(), nullptr) != 0)
      fail("libbpf's linker refused a part");
  if (bpf_linker__finalize(linker.get()) != 0)
    fail("libbpf's linker could not finish");
  off_t size = lseek(output.fd, 0, SEEK_END);
  std::vector<char> linked(size > 0 ? size : 0);
  if (size <= 0 || pread(output.fd, linked.data(), linked.size(), 0) != size)
    fail("the linked object cannot be read back");
  return linked;
}

}  // namespace mt
