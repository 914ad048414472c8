// Prints a trace file's event records as text or JSON lines, reading it a piece at a time.
#include "trace/fxt_dump.h"

#include "common/error.h"
#include "trace/fxt_reader.h"
#include "trace/gzip_file.h"

namespace mt {

int dump_trace(const std::string &path, bool json, std::FILE *out) {
  try {
    // Read and inflated a piece at a time, records print as they are read:
    // any length takes the same memory, and a trace cut short (a SIGKILLed
    // run, a truncated .gz) shows what it holds before the error.
    TraceFileReader file(path);
    FxtByteSource source = [&](char *buf, size_t size) { return file.read(buf, size); };
    // String and thread records only feed the tables; the events print
    // with what they resolve to.
    read_fxt(source, [&](const FxtRecord &r) {
      if (r.type == 2 || r.type == 3)
        return;
      std::string line = (json ? fxt_record_json(r) : fxt_record_text(r)) + "\n";
      std::fwrite(line.data(), 1, line.size(), out);
    });
  } catch (const Error &e) {
    std::fflush(out);
    std::string message = e.what();
    throw Error(message.rfind("cannot read ", 0) == 0 ? message : path + ": " + message);
  }
  std::fflush(out);
  return 0;
}

}  // namespace mt
