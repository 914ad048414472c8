// Fuzz target: bytes, gzipped or not -> `moontrace dump` (the FXT reader,
// then each record as text and as JSON). A damaged trace must end in one
// mt::Error line; anything else (a crash, a sanitizer report, another
// exception, unbounded memory) is a bug.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/error.h"
#include "trace/fxt_dump.h"

namespace {

std::FILE *null_output() {
  static std::FILE *out = std::fopen("/dev/null", "w");
  return out;
}

// The trace as a file, as `moontrace dump` reads one: an in-memory file
// named through /proc, so nothing is left on disk.
class MemoryFile {
 public:
  MemoryFile(const uint8_t *data, size_t size) : fd_(memfd_create("fxt_reader_fuzzer", 0)) {
    if (fd_ < 0 || (size && write(fd_, data, size) != static_cast<ssize_t>(size)))
      std::abort();
  }
  ~MemoryFile() { close(fd_); }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

void dump(const std::string &path, bool json) {
  try {
    mt::dump_trace(path, json, null_output());
  } catch (const mt::Error &e) {
    // Errors are one line on stderr, whatever bytes the trace holds.
    if (std::string(e.what()).find('\n') != std::string::npos) {
      std::fprintf(stderr, "error message of more than one line: %s\n", e.what());
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MemoryFile file(data, size);
  dump(file.path(), false);
  dump(file.path(), true);
  return 0;
}
