// A package (moontrace pack): a script, the modules it required from
// files, and its compiled BPF objects, one per kernel and options it was
// packed for, keyed by the generated C they came from; so that a host
// without Clang runs it as it was tested. Plain data and its bytes here;
// packing and running are the app's.
//
// Bytes: the line "moontrace package 1", then entries, each a line "KIND
// NAME SIZE DIGEST" (DIGEST: ContentHash of the data, which catches
// damage; sha256 of the whole file pins it) followed by SIZE bytes and a
// newline, then the line "end". KIND is meta, script, module or object.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace mt {

struct Package {
  std::string script_name;                     // the main script's file name, "team.lua"
  std::string script;                          // its source
  std::map<std::string, std::string> modules;  // require name -> source
  std::map<std::string, std::string> objects;  // key (see ObjectCache) -> BPF object
  std::vector<std::string> kernels;            // what the objects were compiled for, in words
};

// Throws mt::Error for a name that cannot be packaged.
std::string encode_package(const Package &package);
// Throws mt::Error "PATH: ..." for bytes that are not a whole, undamaged
// package of this format.
Package decode_package(const std::string &bytes, const std::string &path);
// TEXT read from a package, fit for one line of a message.
std::string shown(const std::string &text);

}  // namespace mt
