#include "runtime/fxt_dump.h"

#include <cerrno>
#include <cstring>
#include <memory>

#include "compiler/error.h"
#include "runtime/fxt_reader.h"
#include "runtime/gzip_file.h"

namespace mt {
namespace {

std::string read_whole_file(const std::string &path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f)
    throw Error("cannot read " + path + ": " + std::strerror(errno));
  std::string bytes;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f.get())) > 0)
    bytes.append(buf, n);
  if (std::ferror(f.get()))
    throw Error("cannot read " + path + ": " + std::strerror(errno));
  return bytes;
}

}  // namespace

int dump_trace(const std::string &path, bool json, std::FILE *out) {
  std::string bytes;
  try {
    bytes = gunzip_if_gzipped(read_whole_file(path));
  } catch (const Error &e) {
    throw Error(path + ": " + e.what());
  }
  try {
    // Records print as they are read: a trace cut short still shows what
    // it holds before the error. String and thread records only feed the
    // tables; the events print with what they resolve to.
    read_fxt(bytes, [&](const FxtRecord &r) {
      if (r.type == 2 || r.type == 3)
        return;
      std::string line = (json ? fxt_record_json(r) : fxt_record_text(r)) + "\n";
      std::fwrite(line.data(), 1, line.size(), out);
    });
  } catch (const Error &e) {
    std::fflush(out);
    throw Error(path + ": " + e.what());
  }
  std::fflush(out);
  return 0;
}

}  // namespace mt
