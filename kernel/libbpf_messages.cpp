// Keeps libbpf's messages per thread, through one callback installed once.
#include "kernel/libbpf_messages.h"

#include <bpf/libbpf.h>

#include <cstdarg>
#include <cstdio>
#include <mutex>

namespace mt {

namespace {

thread_local std::string messages;

int keep(enum libbpf_print_level level, const char *format, va_list args) {
  if (level == LIBBPF_DEBUG)
    return 0;
  // The verifier's whole log comes as one message: no fixed-size buffer.
  va_list again;
  va_copy(again, args);
  int n = std::vsnprintf(nullptr, 0, format, again);
  va_end(again);
  if (n <= 0)
    return n;
  size_t old = messages.size();
  messages.resize(old + static_cast<size_t>(n) + 1);
  std::vsnprintf(messages.data() + old, static_cast<size_t>(n) + 1, format, args);
  messages.resize(old + static_cast<size_t>(n));
  return n;
}

}  // namespace

void keep_libbpf_messages() {
  static std::once_flag installed;
  std::call_once(installed, [] { libbpf_set_print(keep); });
}

std::string &libbpf_messages() {
  return messages;
}

}  // namespace mt
