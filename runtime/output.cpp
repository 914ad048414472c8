#include "runtime/output.h"

#include <cerrno>
#include <cstring>

#include "compiler/error.h"
#include "runtime/record_decoder.h"

namespace mt {

Output::~Output() {
  flush();
  if (owned_)
    std::fclose(file_);
}

void Output::open(const std::string &path) {
  std::FILE *f = std::fopen(path.c_str(), "w");
  if (!f)
    throw Error("cannot write output file " + path + ": " + std::strerror(errno));
  if (owned_)
    std::fclose(file_);
  file_ = f;
  owned_ = true;
}

void Output::printed(const std::string &text) {
  if (json_)
    write("{\"type\":\"printf\",\"data\":" + json_string(text) + "}\n");
  else
    write(text);
}

}  // namespace mt
