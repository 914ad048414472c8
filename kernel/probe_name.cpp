// Splits probe name text into kind and parts, expanding aliases, and matches glob patterns.
#include "kernel/probe_name.h"

#include <cctype>
#include <cstdlib>
#include <vector>

#include "common/error.h"

namespace mt {

namespace {

std::vector<std::string> split(const std::string &text, char sep, size_t max_parts) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (parts.size() + 1 < max_parts) {
    size_t pos = text.find(sep, start);
    if (pos == std::string::npos)
      break;
    parts.push_back(text.substr(start, pos - start));
    start = pos + 1;
  }
  parts.push_back(text.substr(start));
  return parts;
}

std::string upper(std::string text) {
  for (char &c : text)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// The kind a name's prefix ("tracepoint", "t") says; kinds without a
// target (begin, end) stand alone, not as prefixes.
const ProbeKindInfo *kind_of_prefix(const std::string &prefix) {
  for (const ProbeKindInfo &k : probe_kinds()) {
    if (k.target == TargetForm::None)
      continue;
    if (prefix == k.name)
      return &k;
    for (const char *alias : k.alias)
      if (alias && prefix == alias)
        return &k;
  }
  return nullptr;
}

}  // namespace

const char *kind_name(ProbeKind kind) {
  return probe_kind(kind).name;
}

bool ProbeName::in_kernel() const {
  return probe_kind(kind).runs == RunsAt::Kernel;
}

bool ProbeName::has_direct_btf_access() const {
  return probe_kind(kind).btf_typed;
}

bool ProbeName::has_wildcard() const {
  auto wild = [](const std::string &s) { return s.find_first_of("*?") != std::string::npos; };
  return wild(category) || wild(target) || wild(symbol);
}

std::string ProbeName::to_string() const {
  std::string kind_text = kind_name(kind);
  switch (probe_kind(kind).target) {
    case TargetForm::None: return kind_text;
    case TargetForm::CategoryEvent: return kind_text + ":" + category + ":" + target;
    case TargetForm::Name: return kind_text + ":" + target;
    case TargetForm::PathSymbol: return kind_text + ":" + target + ":" + symbol;
    case TargetForm::PathProbe: return kind_text + ":" + target + ":" + category + ":" + symbol;
    case TargetForm::Period: return kind_text + ":ms:" + std::to_string(interval_ms);
  }
  return kind_text;
}

ProbeName parse_probe_name(const std::string &text) {
  for (const ProbeKindInfo &k : probe_kinds())
    if (k.target == TargetForm::None && (text == k.name || text == upper(k.name)))
      return ProbeName{k.kind, "", "", "", 0};
  auto parts = split(text, ':', 3);
  const ProbeKindInfo *kind = kind_of_prefix(parts[0]);
  if (!kind) {
    std::string kinds;
    for (size_t i = 0; i < probe_kinds().size(); i++)
      kinds += std::string(i == 0                          ? ""
                           : i + 1 == probe_kinds().size() ? " or "
                                                           : ", ") +
               probe_kinds()[i].name;
    throw Error("unknown probe type '" + parts[0] + "' in '" + text + "' (expected " + kinds + ")");
  }
  ProbeName name{kind->kind, "", "", "", 0};
  auto malformed = [&](const std::string &shape) {
    return Error("malformed probe '" + text + "': expected " + std::string(kind->name) + ":" +
                 shape);
  };
  auto need = [&](size_t n, const std::string &shape) {
    if (parts.size() != n || parts.back().empty())
      throw malformed(shape);
  };
  switch (kind->target) {
    case TargetForm::None: break;  // taken above
    case TargetForm::CategoryEvent:
      need(3, "CATEGORY:NAME");
      name.category = parts[1];
      name.target = parts[2];
      break;
    case TargetForm::Name:
      need(2, "FUNCTION");
      name.target = parts[1];
      break;
    case TargetForm::PathSymbol: {
      // The path may not contain ':'; the symbol is what follows the last one.
      size_t last = text.rfind(':');
      size_t first = text.find(':');
      if (last == first || last + 1 == text.size())
        throw malformed("PATH:SYMBOL");
      name.target = text.substr(first + 1, last - first - 1);
      name.symbol = text.substr(last + 1);
      break;
    }
    case TargetForm::PathProbe: {
      // The path may not contain ':'; the provider and name follow it.
      size_t first = text.find(':');
      size_t last = text.rfind(':');
      size_t middle =
          last == std::string::npos || last == 0 ? std::string::npos : text.rfind(':', last - 1);
      if (middle == std::string::npos || middle <= first + 1 || last + 1 == text.size() ||
          middle + 1 == last)
        throw malformed("PATH:PROVIDER:NAME");
      name.target = text.substr(first + 1, middle - first - 1);
      name.category = text.substr(middle + 1, last - middle - 1);
      name.symbol = text.substr(last + 1);
      break;
    }
    case TargetForm::Period: {
      need(3, "ms:N or interval:s:N");
      char *end = nullptr;
      long n = std::strtol(parts[2].c_str(), &end, 10);
      long scale = parts[1] == "ms" ? 1 : parts[1] == "s" ? 1000 : 0;
      if (*end || n <= 0 || scale == 0)
        throw malformed("ms:N or interval:s:N with N > 0");
      name.interval_ms = n * scale;
      break;
    }
  }
  return name;
}

bool glob_match(const std::string &pattern, const std::string &text) {
  size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      p++;
      t++;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*')
    p++;
  return p == pattern.size();
}

bool any_names_a_file(const std::vector<std::string> &names) {
  for (const auto &name : names) {
    try {
      if (probe_kind(parse_probe_name(name).kind).user_memory)
        return true;
    } catch (const Error &) {
      return true;
    }
  }
  return false;
}

}  // namespace mt
