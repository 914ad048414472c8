// The command line: moontrace [ENGINE OPTIONS] SCRIPT [SCRIPT OPTIONS] [+ SCRIPT [SCRIPT
// OPTIONS]]...
#pragma once
#include <string>
#include <vector>

#include "run/cgroup_filter.h"
#include "script/script_search.h"

namespace mt {

struct Options {
  std::string script;                    // path, or a shipped script's name
  std::vector<std::string> script_args;  // everything after the script
  // Scripts run with it in one session and trace (`+ SCRIPT [OPTIONS]`).
  struct MoreScript {
    std::string script;
    std::vector<std::string> args;
  };
  std::vector<MoreScript> more_scripts;
  std::string command;    // -c
  int pid = 0;            // -p
  CgroupFilter cgroup;    // --cgroup: a cgroup v2 directory's subtree
  std::string output;     // -o
  double duration = 0;    // --duration, seconds; 0: until stopped
  int verbose = 0;        // -v
  bool emit_c = false;    // --emit-c
  bool unsafe = false;    // --unsafe
  bool no_cache = false;  // --no-cache
  bool help = false;
  bool version = false;
  bool list_scripts = false;  // moontrace list
  std::string dump_file;      // moontrace dump FILE [--json]
  bool dump_json = false;
  bool pack = false;                  // moontrace pack [-o FILE] [--btf PATH]... SCRIPT
  std::vector<std::string> pack_btf;  // --btf: kernels to compile for besides this one
  std::string expect_digest;          // --expect-digest: a package's sha256
  std::string signers;                // --signers: allowed signers of the package's NAME.mtpkg.sig
  bool check = false;                 // moontrace check [--btf PATH] SCRIPT
  std::string check_btf;              // --btf: the kernel to check against, not this one
  bool list_probes = false;           // -l [PATTERN]
  std::string list_pattern;           // glob over probe names; "" lists all
  bool json = false;                  // -f json
  bool folded = false;                // -f folded
};

// Throws mt::Error on bad engine options.
Options parse_command_line(int argc, char **argv);

const char *usage_text();
// `moontrace list`: each shipped script and the first line of its help.
// `moontrace list`: each script by name, version, description and where
// it is (all_scripts(): in search order; one hidden by another says so).
std::string scripts_text(const std::vector<FoundScript> &scripts);

}  // namespace mt
