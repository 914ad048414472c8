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
#include "run/kernel_btf_lookups.h"

namespace mt {
namespace {

constexpr const char *kVmlinuxBtf = "/sys/kernel/btf/vmlinux";

// libbpf's own function NAME (at VERSION), which this file's definition hides.
template <typename Function>
Function *libbpf_own(const char *name, const char *version) {
  return reinterpret_cast<Function *>(dlvsym(RTLD_NEXT, name, version));
}

void libbpf_free(struct btf *btf) {
  using Free = void(struct btf *);
  static Free *real = libbpf_own<Free>("btf__free", "LIBBPF_0.0.1");
  if (real)
    real(btf);
}

__s32 libbpf_find(const struct btf *btf, const char *name, __u32 kind) {
  using Find = __s32(const struct btf *, const char *, __u32);
  static Find *real = libbpf_own<Find>("btf__find_by_name_kind", "LIBBPF_0.0.6");
  if (!real)
    return -ENOSYS;
  return real(btf, name, kind);
}

struct btf *libbpf_parse() {
  using Parse = struct btf *();
  static Parse *parse = [] {
    Parse *found = libbpf_own<Parse>("btf__load_vmlinux_btf", "LIBBPF_0.5.0");
    return found ? found : reinterpret_cast<Parse *>(dlsym(RTLD_NEXT, "libbpf_find_kernel_btf"));
  }();
  if (!parse) {
    errno = ENOSYS;
    return nullptr;
  }
  return parse();
}

// The copy parsed ahead, and who holds it: each load that took it until
// libbpf frees it, and the pool until the run drops it.
struct Pool {
  std::mutex mutex;
  struct btf *shared = nullptr;
  unsigned loads_holding = 0;
  bool pool_holds = false;
  bool lending = false;          // to loads, between lend and drop
  std::vector<BtfLookup> found;  // in the shared copy, ahead
  KernelBtfAhead counts;

  // Under the mutex: frees the copy once no one holds it.
  void free_if_unheld() {
    if (shared && loads_holding == 0 && !pool_holds) {
      libbpf_free(shared);
      shared = nullptr;
      found.clear();
    }
  }
};

Pool &pool() {
  static Pool p;  // a run that stops before its load leaves its copy here
  return p;
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
// allows one, else read. libbpf's own search (the vmlinux files of /boot
// and /lib/modules) where there is no such file. Null, with errno, if none
// works.
struct btf *parse_kernel_btf() {
  UniqueFd fd(open(kVmlinuxBtf, O_RDONLY | O_CLOEXEC));
  struct stat st;
  if (fd.get() < 0 || fstat(fd.get(), &st) != 0 || st.st_size <= 0)
    return libbpf_parse();
  struct btf *btf = nullptr;
  void *data = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (data != MAP_FAILED) {
    btf = btf__new(data, st.st_size);  // copies the bytes
    munmap(data, st.st_size);
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

void parse_kernel_btf_ahead(std::string_view object, const std::atomic<bool> &cancelled) {
  {
    std::lock_guard lock(pool().mutex);
    pool().pool_holds = false;
    pool().free_if_unheld();         // an earlier run's, were it still here
    if (cancelled || pool().shared)  // or still held by an earlier load
      return;
  }
  struct btf *btf = parse_kernel_btf();
  if (!btf)
    return;
  // Computed on first use, so computed now: the loads then only read it.
  btf__pointer_size(btf);
  std::vector<BtfLookup> found = kernel_btf_lookups(object);
  find_in_one_pass(btf, found);
  std::lock_guard lock(pool().mutex);
  if (pool().shared) {  // another run's, parsed meanwhile
    libbpf_free(btf);
    return;
  }
  pool().shared = btf;
  pool().found = std::move(found);
  pool().pool_holds = true;
  pool().counts = {.parsed = true};
}

void lend_kernel_btf_ahead() {
  std::lock_guard lock(pool().mutex);
  pool().lending = true;
}

KernelBtfAhead drop_kernel_btf_ahead() {
  std::lock_guard lock(pool().mutex);
  pool().pool_holds = false;
  pool().lending = false;
  pool().free_if_unheld();
  return std::exchange(pool().counts, {});
}

}  // namespace mt

extern "C" struct btf *btf__load_vmlinux_btf(void) {
  {
    auto &pool = mt::pool();
    std::lock_guard lock(pool.mutex);
    if (pool.shared && pool.pool_holds && pool.lending) {
      pool.loads_holding++;
      pool.counts.taken++;
      return pool.shared;
    }
  }
  return mt::parse_kernel_btf();
}

extern "C" void btf__free(struct btf *btf) {
  if (!btf)
    return;
  {
    auto &pool = mt::pool();
    std::lock_guard lock(pool.mutex);
    if (btf == pool.shared) {  // freed here once no one holds it
      if (pool.loads_holding > 0)
        pool.loads_holding--;
      pool.free_if_unheld();
      return;
    }
  }
  mt::libbpf_free(btf);
}

extern "C" __s32 btf__find_by_name_kind(const struct btf *btf, const char *name, __u32 kind) {
  if (btf && name) {
    auto &pool = mt::pool();
    std::lock_guard lock(pool.mutex);
    if (btf == pool.shared)
      for (const mt::BtfLookup &lookup : pool.found)
        if (lookup.id > 0 && lookup.kind == kind && lookup.name == name) {
          pool.counts.found_ahead++;
          return lookup.id;
        }
  }
  return mt::libbpf_find(btf, name, kind);
}
