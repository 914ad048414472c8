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

// One copy: from a private mapping of the file where the kernel allows one,
// else as libbpf reads it. Null, with errno, if neither works.
struct btf *parse_kernel_btf() {
  UniqueFd fd(open(kVmlinuxBtf, O_RDONLY | O_CLOEXEC));
  struct stat st;
  if (fd.get() >= 0 && fstat(fd.get(), &st) == 0 && st.st_size > 0) {
    void *data = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (data != MAP_FAILED) {
      struct btf *btf = btf__new(data, st.st_size);  // copies the bytes
      munmap(data, st.st_size);
      if (btf)
        return btf;
    }
  }
  return libbpf_parse();
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
    struct btf *btf = parse_kernel_btf();
    if (!btf)
      return;
    std::lock_guard lock(pool().mutex);
    pool().ready.push_back(btf);
    pool().counts.parsed++;
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
