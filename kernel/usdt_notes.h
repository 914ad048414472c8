// The USDT probes a binary defines: its .note.stapsdt notes (sys/sdt.h), each
// a provider, a name and how to find its arguments.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mt {

// What libbpf describes of a probe's arguments (its USDT_MAX_ARG_CNT): a
// note with more is not read.
inline constexpr size_t kMaxUsdtArguments = 12;

struct UsdtNote {
  std::string provider, name;
  std::string arguments;  // as sys/sdt.h writes them: "-4@%edi 8@-16(%rbp)"
  uint64_t address = 0;
  uint64_t semaphore = 0;  // 0: none (the probe always fires)

  // Each argument's C type, from its size and sign ("-4@..." is __s32).
  std::vector<std::string> argument_types() const;
};

// Throws mt::Error naming PATH when it is not a readable ELF file.
std::vector<UsdtNote> usdt_notes(const std::string &path);

}  // namespace mt
