// Parses the kernel's BTF ahead of libbpf's loads, and serves it to them.
#include "run/kernel_btf_ahead.h"

#include <bpf/btf.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/unique_fd.h"
#include "compiler/bpf_elf.h"

namespace mt {
namespace {

constexpr const char *kVmlinuxBtf = "/sys/kernel/btf/vmlinux";

struct Pool {
  std::mutex mutex;
  std::vector<struct btf *> ready;
  KernelBtfAhead counts;
  // A run that stops before its load leaves its copies here.
  ~Pool() {
    for (struct btf *btf : ready)
      btf__free(btf);
  }
};

Pool &pool() {
  static Pool p;
  return p;
}

// libbpf's own btf__load_vmlinux_btf, which this file's definition hides.
struct btf *libbpf_parse() {
  using Parse = struct btf *(*)();
  static Parse parse = [] {
    void *found = dlvsym(RTLD_NEXT, "btf__load_vmlinux_btf", "LIBBPF_0.5.0");
    if (!found)
      found = dlsym(RTLD_NEXT, "libbpf_find_kernel_btf");
    return reinterpret_cast<Parse>(found);
  }();
  if (!parse) {
    errno = ENOSYS;
    return nullptr;
  }
  return parse();
}

// SIZE bytes of FD's file, read as libbpf reads it: sysfs gives 4 KiB a call.
std::optional<std::vector<char>> read_all(int fd, size_t size) {
  std::vector<char> bytes(size);
  for (size_t used = 0; used < size;) {
    ssize_t n = read(fd, bytes.data() + used, size - used);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return std::nullopt;
    used += n;
  }
  return bytes;
}

// One copy, the file opened once: from a private mapping where the kernel
// allows one (MAPPED then says so), else read. libbpf's own search (the
// vmlinux files of /boot and /lib/modules) where there is no such file.
// Null, with errno, if none works.
struct btf *parse_kernel_btf(bool *mapped = nullptr) {
  UniqueFd fd(open(kVmlinuxBtf, O_RDONLY | O_CLOEXEC));
  struct stat st;
  if (fd.get() < 0 || fstat(fd.get(), &st) != 0 || st.st_size <= 0)
    return libbpf_parse();
  struct btf *btf = nullptr;
  void *data = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (data != MAP_FAILED) {
    btf = btf__new(data, st.st_size);  // copies the bytes
    munmap(data, st.st_size);
    if (mapped)
      *mapped = true;
  } else if (auto bytes = read_all(fd.get(), st.st_size)) {
    btf = btf__new(bytes->data(), bytes->size());
  }
  return btf ? btf : libbpf_parse();
}

bool starts_with_any(std::string_view name, std::initializer_list<std::string_view> prefixes) {
  for (auto prefix : prefixes)
    if (name.starts_with(prefix))
      return true;
  return false;
}

// Whether .BTF.ext holds CO-RE relocations: its header's core_relo_len,
// the eighth 32-bit word, present when the header is that long.
bool has_core_relocations(const ElfObject &elf) {
  const ElfSection *ext = elf.section(".BTF.ext");
  if (!ext)
    return false;
  std::array<uint32_t, 7> header{};  // from hdr_len on
  if (ext->data.size() < 4 + sizeof header)
    return false;
  std::memcpy(header.data(), ext->data.data() + 4, sizeof header);
  uint32_t header_len = header[0];
  return header_len >= 32 && header[6] > 0;
}

}  // namespace

bool needs_kernel_btf(std::string_view object) {
  try {
    ElfObject elf(object);
    for (const auto &section : elf.sections())
      // The sections libbpf loads as tracing, LSM or struct_ops programs.
      if (section.executable() &&
          starts_with_any(section.name, {"tp_btf", "fentry", "fexit", "fmod_ret", "iter", "lsm",
                                         "struct_ops", "freplace"}))
        return true;
    for (const auto &symbol : elf.symbols())
      if (symbol.section == SHN_UNDEF && !symbol.name.empty() && symbol.binding != STB_LOCAL)
        return true;
    return has_core_relocations(elf);
  } catch (const Error &) {
    return false;
  }
}

void parse_kernel_btf_ahead(unsigned copies, const std::atomic<bool> &cancelled) {
  for (unsigned i = 0; i < copies && !cancelled; i++) {
    bool mapped = false;
    struct btf *btf = parse_kernel_btf(&mapped);
    if (!btf)
      return;
    {
      std::lock_guard lock(pool().mutex);
      pool().ready.push_back(btf);
      pool().counts.parsed++;
    }
    // Read, a copy costs what libbpf's own does (9-13 ms here): one ahead,
    // and the other half reads its own while the first is verified.
    if (!mapped)
      return;
  }
}

KernelBtfAhead drop_kernel_btf_ahead() {
  std::lock_guard lock(pool().mutex);
  for (struct btf *btf : pool().ready)
    btf__free(btf);
  pool().ready.clear();
  return std::exchange(pool().counts, {});
}

}  // namespace mt

extern "C" struct btf *btf__load_vmlinux_btf(void) {
  {
    auto &pool = mt::pool();
    std::lock_guard lock(pool.mutex);
    if (!pool.ready.empty()) {
      struct btf *btf = pool.ready.back();
      pool.ready.pop_back();
      pool.counts.taken++;
      return btf;
    }
  }
  return mt::parse_kernel_btf();
}
