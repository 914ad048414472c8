// The declaration a script builds: what to hook, test and capture. It is
// plain data so each later stage can be fed and tested without Lua.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace mt {

// Where something was written in the script, for error messages.
struct ScriptLocation {
  std::string file;
  int line = 0;
  int column = 0;  // 0: unknown
};

// A C expression written in the script, and where it stands there.
struct Expression {
  std::string text;
  ScriptLocation where;
};

struct Capture {
  std::string name;
  Expression expr;
  bool is_string = false;  // written as str(ptr[, len])
  int string_size = 64;
};

enum class ParamType { Int, Uint, Bool, String };

struct Param {
  std::string name;
  std::string short_name;  // one letter, e.g. "T" for -T
  ParamType type = ParamType::Int;
  std::string help;
  std::string default_text;  // as typed on the command line
  std::string value_text;    // after command-line parsing
  ScriptLocation where;
};

struct ProbeDecl {
  int id = 0;                             // index in Declaration::probes
  std::vector<std::string> alternatives;  // probe names; first available wins
  Expression predicate;                   // empty: always
  std::vector<Capture> captures;          // sent to user space, by name
  bool has_handler = false;               // a Lua function receives events
  ScriptLocation where;
};

struct Declaration {
  std::string script_path;
  std::vector<ProbeDecl> probes;
  std::vector<Param> params;
};

}  // namespace mt
