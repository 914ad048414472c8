// Matches script options to declared params, validates their values and prints param help.
#include "script/script_params.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "bpf_headers/mt_abi.h"
#include "common/error.h"

namespace mt {

ScriptArgs::ScriptArgs(std::vector<std::string> args)
    : args_(std::move(args)), used_(args_.size()) {
  for (size_t i = 0; i < args_.size(); i++)
    if (args_[i] == "--help" || args_[i] == "-h") {
      help_ = true;
      used_[i] = true;
    }
}

// "--all-rings=x" -> "--all_rings=x": long options may spell a
// parameter's underscores as dashes, as command lines usually do.
static std::string underscored(const std::string &arg) {
  if (arg.rfind("--", 0) != 0)
    return arg;
  std::string out = arg;
  for (size_t i = 2; i < out.size() && out[i] != '='; i++)
    if (out[i] == '-' && !(i == 4 && out.rfind("--no-", 0) == 0))
      out[i] = '_';
  return out;
}

// Checks a value given on the command line for the option it was given as.
static void parse_given(const Param &param, const std::string &value, const std::string &option) {
  try {
    check_choice(param, parse_param(param.type, value));
  } catch (const Error &e) {
    throw Error("invalid value '" + value + "' for " + option + ": " + e.what());
  }
}

void check_choice(const Param &param, const ParamValue &value) {
  if (param.choices.empty())
    return;
  std::string all;
  for (const auto &choice : param.choices) {
    ParamValue allowed = parse_param(param.type, choice);
    if (allowed.number == value.number && allowed.text == value.text)
      return;
    all += (all.empty() ? "" : ", ") + choice;
  }
  throw Error("expected one of " + all);
}

std::string ScriptArgs::take_value(const Param &param) {
  std::string value = param.default_text;
  if (param.positional) {
    // The first word no option took. Options' values are taken by then:
    // positional parameters are declared after the options.
    for (size_t i = 0; i < args_.size(); i++) {
      if (used_[i] || (args_[i].size() > 1 && args_[i][0] == '-' && !std::isdigit(args_[i][1])))
        continue;
      used_[i] = true;
      parse_given(param, args_[i], param.name);
      return args_[i];
    }
    return value;
  }
  std::string long_name = "--" + param.name;
  for (size_t i = 0; i < args_.size(); i++) {
    const std::string a = underscored(args_[i]);
    bool is_short = !param.short_name.empty() && a == "-" + param.short_name;
    std::string given = a;
    bool short_attached = !param.short_name.empty() && param.type != ParamType::Bool &&
                          a.size() > param.short_name.size() + 1 &&
                          a.rfind("-" + param.short_name, 0) == 0 && a[1] != '-';
    if (a.rfind(long_name + "=", 0) == 0) {
      value = a.substr(long_name.size() + 1);
    } else if (short_attached) {
      value = a.substr(param.short_name.size() + 1);
      given = "-" + param.short_name;
    } else if (a == long_name || is_short) {
      if (param.type == ParamType::Bool) {
        value = "true";
      } else if (i + 1 < args_.size()) {
        value = args_[i + 1];
        used_[i + 1] = true;
      } else {
        throw Error("option " + a + " needs a value (" + param_type_name(param.type) + ")");
      }
    } else if (param.type == ParamType::Bool && a == "--no-" + param.name) {
      value = "false";
    } else {
      continue;
    }
    used_[i] = true;
    parse_given(param, value, given.substr(0, given.find('=')));
  }
  return value;
}

void ScriptArgs::check_all_used() const {
  for (size_t i = 0; i < args_.size(); i++)
    if (!used_[i])
      throw Error((args_[i][0] == '-' ? "unknown script option '" : "unexpected argument '") +
                  args_[i] + "' (see the script's --help)");
}

ParamValue parse_param(ParamType type, const std::string &text) {
  ParamValue parsed;
  char *end = nullptr;
  errno = 0;
  switch (type) {
    case ParamType::Int:
      parsed.number = std::strtoll(text.c_str(), &end, 0);
      if (text.empty() || *end || errno)
        throw Error("expected an integer");
      break;
    case ParamType::Uint:
      parsed.number = static_cast<int64_t>(std::strtoull(text.c_str(), &end, 0));
      if (text.empty() || *end || errno || text[0] == '-')
        throw Error("expected a non-negative integer");
      break;
    case ParamType::Bool:
      if (text != "true" && text != "false" && text != "1" && text != "0" && text != "yes" &&
          text != "no")
        throw Error("expected true or false");
      parsed.number = text == "true" || text == "1" || text == "yes";
      break;
    case ParamType::String:
      if (text.size() >= MT_PARAM_STRING_BYTES)
        throw Error("strings are limited to " + std::to_string(MT_PARAM_STRING_BYTES - 1) +
                    " bytes");
      parsed.text = text;
      break;
  }
  return parsed;
}

std::optional<ParamType> param_type_named(const std::string &name) {
  if (name == "int" || name == "integer")
    return ParamType::Int;
  if (name == "uint")
    return ParamType::Uint;
  if (name == "bool" || name == "boolean")
    return ParamType::Bool;
  if (name == "string")
    return ParamType::String;
  return std::nullopt;
}

const char *param_type_name(ParamType type) {
  switch (type) {
    case ParamType::Int: return "int";
    case ParamType::Uint: return "uint";
    case ParamType::Bool: return "bool";
    case ParamType::String: return "string";
  }
  return "?";
}

// TEXT with each line indented by two spaces.
static std::string indented(const std::string &text) {
  std::string out = "  ";
  for (char c : text)
    out += c == '\n' ? std::string("\n  ") : std::string(1, c);
  return out + "\n";
}

std::string params_help(const std::string &script, const std::vector<Param> &params,
                        const ScriptInfo *info) {
  std::string out;
  if (info && !info->description.empty()) {
    out += (info->name.empty() ? script : info->name) +
           (info->version.empty() ? "" : " " + info->version) + ": " + info->description + "\n\n";
    if (!info->help.empty())
      out += info->help + (info->help.back() == '\n' ? "\n" : "\n\n");
  }
  out += "usage: moontrace [ENGINE OPTIONS] " + script + " [SCRIPT OPTIONS]";
  for (const auto &p : params)
    if (p.positional)
      out += " [" + p.name + "]";
  out += "\n";
  if (params.empty()) {
    out += "\nThis script has no options.\n";
  } else {
    out += "\nScript options:\n";
    for (const auto &p : params) {
      std::string flag = "  ";
      std::string dashed = p.name;
      std::replace(dashed.begin(), dashed.end(), '_', '-');
      if (p.positional) {
        flag += p.name;  // as the usage line names it
      } else {
        flag += p.short_name.empty() ? "    " : "-" + p.short_name + ", ";
        flag += "--" + dashed;
      }
      if (p.type != ParamType::Bool)
        flag += std::string(" ") + param_type_name(p.type);
      if (flag.size() < 28)
        flag.resize(28, ' ');
      else
        flag += "\n" + std::string(28, ' ');
      out += flag + p.help;
      if (!p.choices.empty()) {
        std::string all;
        for (const auto &c : p.choices)
          all += (all.empty() ? "" : ", ") + c;
        out += " (one of " + all + ")";
      }
      if (!p.default_text.empty())
        out += " (default: " + p.default_text + ")";
      out += "\n";
    }
  }
  if (!info)
    return out;
  auto list = [&](const char *title, const std::vector<std::string> &items) {
    if (items.empty())
      return;
    out += std::string("\n") + title + ":\n";
    for (const auto &i : items)
      out += indented(i);
  };
  list("Examples", info->examples);
  list("Requires", info->requirements);
  list("Uses where the kernel has them", info->optional);
  list("Not met on this kernel (so the script stopped there, and may have more options)",
       info->unmet);
  return out;
}

std::string session_help(const std::string &script, const std::string &path,
                         const Declaration &decl) {
  ScriptInfo info;
  bool said = false;
  for (const auto &i : decl.scripts)
    if (i.path == path) {
      info = i;
      said = true;
    }
  for (const auto &i : decl.scripts)
    if (i.path != path)
      for (const auto &u : i.unmet)
        info.unmet.push_back(i.path + ": " + u);
  said = said || !info.unmet.empty();
  return params_help(script, decl.params, said ? &info : nullptr);
}

}  // namespace mt
