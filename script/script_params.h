// Script options (after the script name on the command line): matched to
// the parameters the script declares, checked against their types.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/declaration.h"

namespace mt {

class ScriptArgs {
 public:
  explicit ScriptArgs(std::vector<std::string> args);

  bool wants_help() const { return help_; }
  bool empty() const { return args_.empty(); }
  // The command-line value for `param` (or its default), validated.
  // Throws mt::Error naming the option on a bad value.
  std::string take_value(const Param &param);
  // Throws for options no parameter claimed.
  void check_all_used() const;

 private:
  std::vector<std::string> args_;
  std::vector<bool> used_;
  bool help_ = false;
};

// Parses a value of `type`; throws Error saying what was expected.
ParamValue parse_param(ParamType type, const std::string &text);
// "int", "uint", "bool", "string" (and "integer", "boolean").
std::optional<ParamType> param_type_named(const std::string &name);
const char *param_type_name(ParamType type);

// `moontrace SCRIPT --help`: usage line and one line per parameter.
// --help of the script at `path` (named `script` on the command line):
// params_help with its script{}, and what this kernel lacks of any other
// script{} in the session (a module it requires, a script joined by '+').
std::string session_help(const std::string &script, const std::string &path,
                         const Declaration &decl);
// Throws mt::Error("expected one of ...") when PARAM has choices and VALUE is none of them.
void check_choice(const Param &param, const ParamValue &value);
// With the script's script{} (INFO, when it has one): its name, version
// and description first, its help, then the options, its examples, what
// it requires of the kernel and what this kernel lacks of it.
std::string params_help(const std::string &script, const std::vector<Param> &params,
                        const ScriptInfo *info = nullptr);

}  // namespace mt
