// Files built into the binary: the BPF headers generated C includes, and
// the Lua stdlib and shipped scripts.
#pragma once
#include <string>
#include <vector>

namespace mt {

struct EmbeddedFile {
  const char *name;
  const char *content;
};

extern const std::vector<EmbeddedFile> kBpfHeaders;
extern const std::vector<EmbeddedFile> kLuaFiles;     // stdlib modules
extern const std::vector<EmbeddedFile> kScriptFiles;  // shipped scripts

}  // namespace mt
