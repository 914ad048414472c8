// Splits probe name text into kind and parts, expanding aliases, and matches glob patterns.
#include "kernel/probe_name.h"

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

// The kind a name's prefix ("tracepoint", "t") says; begin and end stand
// alone, not as prefixes.
const ProbeKindInfo *kind_of_prefix(const std::string &prefix) {
  for (const ProbeKindInfo &k : probe_kinds()) {
    if (k.kind == ProbeKind::Begin || k.kind == ProbeKind::End)
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
  return probe_kind(kind).in_kernel;
}

bool ProbeName::has_direct_btf_access() const {
  return probe_kind(kind).btf_typed;
}

bool ProbeName::has_wildcard() const {
  auto wild = [](const std::string &s) { return s.find_first_of("*?") != std::string::npos; };
  return wild(category) || wild(target) || wild(symbol);
}

std::string ProbeName::to_string() const {
  switch (kind) {
    case ProbeKind::Tracepoint: return "tracepoint:" + category + ":" + target;
    case ProbeKind::Uprobe:
    case ProbeKind::Uretprobe: return std::string(kind_name(kind)) + ":" + target + ":" + symbol;
    case ProbeKind::Interval: return "interval:ms:" + std::to_string(interval_ms);
    case ProbeKind::Begin:
    case ProbeKind::End: return kind_name(kind);
    default: return std::string(kind_name(kind)) + ":" + target;
  }
}

ProbeName parse_probe_name(const std::string &text) {
  if (text == "begin" || text == "BEGIN")
    return ProbeName{ProbeKind::Begin, "", "", "", 0};
  if (text == "end" || text == "END")
    return ProbeName{ProbeKind::End, "", "", "", 0};
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
  auto need = [&](size_t n, const std::string &shape) {
    if (parts.size() != n || parts.back().empty())
      throw Error("malformed probe '" + text + "': expected " + shape);
  };
  switch (name.kind) {
    case ProbeKind::Tracepoint:
      need(3, "tracepoint:CATEGORY:NAME");
      name.category = parts[1];
      name.target = parts[2];
      break;
    case ProbeKind::Uprobe:
    case ProbeKind::Uretprobe: {
      // The path may not contain ':'; the symbol is what follows the last one.
      size_t last = text.rfind(':');
      size_t first = text.find(':');
      if (last == first || last + 1 == text.size())
        throw Error("malformed probe '" + text + "': expected uprobe:PATH:SYMBOL");
      name.target = text.substr(first + 1, last - first - 1);
      name.symbol = text.substr(last + 1);
      break;
    }
    case ProbeKind::Interval: {
      need(3, "interval:ms:N or interval:s:N");
      char *end = nullptr;
      long n = std::strtol(parts[2].c_str(), &end, 10);
      long scale = parts[1] == "ms" ? 1 : parts[1] == "s" ? 1000 : 0;
      if (*end || n <= 0 || scale == 0)
        throw Error("malformed probe '" + text +
                    "': expected interval:ms:N or interval:s:N with N > 0");
      name.interval_ms = n * scale;
      break;
    }
    default: need(2, std::string(kind_name(name.kind)) + ":FUNCTION"); name.target = parts[1];
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

}  // namespace mt
