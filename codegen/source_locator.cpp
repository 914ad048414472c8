// Maps expression text and generated #line positions back to script lines and columns.
#include "codegen/source_locator.h"

#include <algorithm>
#include <cstring>
#include <regex>
#include <string_view>
#include <tuple>

namespace mt {

SourceIndex::SourceIndex(std::string_view text)
    : starts_{0}, size_(text.size()), runs_(size_t(1) << kRunBits) {
  for (const char *at = text.data(), *end = at + text.size();
       (at = static_cast<const char *>(std::memchr(at, '\n', end - at))); at++)
    starts_.push_back(at + 1 - text.data());
  for (size_t at = 0; at + 4 <= text.size(); at++)
    runs_[run_slot(text.data() + at)] = true;
}

uint32_t SourceIndex::run_slot(const char *at) {
  uint32_t run;
  std::memcpy(&run, at, 4);
  return (run * 0x9e3779b1u) >> (32 - kRunBits);
}

size_t SourceIndex::start_of(int line) const {
  return line >= 1 && size_t(line) <= starts_.size() ? starts_[line - 1] : size_;
}

std::pair<int, int> SourceIndex::line_and_column(size_t offset) const {
  size_t line = std::upper_bound(starts_.begin(), starts_.end(), offset) - starts_.begin();
  return {int(line), int(offset - starts_[line - 1]) + 1};
}

bool SourceIndex::may_contain(std::string_view part) const {
  if (part.size() > size_)
    return false;
  for (size_t at = 0; at + 4 <= part.size(); at++)
    if (!runs_[run_slot(part.data() + at)])
      return false;
  return true;
}

ScriptLocation locate_expression(const std::string &source, const SourceIndex &index,
                                 const std::string &expr, ScriptLocation near) {
  if (expr.empty() || near.line <= 0 || !index.may_contain(expr))
    return near;
  // Where EXPR stands quoted, starting in [FROM, UNTIL).
  auto quoted_at = [&](size_t from, size_t until) {
    size_t end = until == std::string::npos ? source.size()
                                            : std::min(source.size(), until + expr.size() - 1);
    // memmem: glibc's skips ahead where find() stops at every first byte.
    auto find = [&](size_t at) -> size_t {
      if (at > end)
        return std::string::npos;
      const void *hit = memmem(source.data() + at, end - at, expr.data(), expr.size());
      return hit ? static_cast<const char *>(hit) - source.data() : std::string::npos;
    };
    for (size_t pos = find(from); pos != std::string::npos; pos = find(pos + 1)) {
      char before = pos > 0 ? source[pos - 1] : 0;
      // Lua drops the newline that follows a long bracket's opening: [[\n
      if (before == '\n' && pos > 1 && source[pos - 2] == '[')
        before = '[';
      char after = pos + expr.size() < source.size() ? source[pos + expr.size()] : 0;
      if ((before == '"' || before == '\'' || before == '[') &&
          (after == '"' || after == '\'' || after == ']'))
        return pos;
    }
    return std::string::npos;
  };
  // A call spanning lines is reported at its first line: search from there,
  // then above it for expressions built elsewhere in the script.
  size_t start = index.start_of(near.line);
  size_t best = quoted_at(start, std::string::npos);
  if (best == std::string::npos)
    best = quoted_at(0, start);
  if (best == std::string::npos)
    return near;
  ScriptLocation found = near;
  std::tie(found.line, found.column) = index.line_and_column(best);
  return found;
}

std::string source_line(const std::string &source, int line) {
  size_t start = SourceIndex(source).start_of(line);
  if (start >= source.size())
    return "";
  size_t end = source.find('\n', start);
  return source.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::optional<ScriptLocation> declaration_at_generated_line(const std::string &source,
                                                            const std::string &generated_file,
                                                            int line) {
  static const std::regex directive(R"re(^\s*#\s*line\s+(\d+)\s+"([^"]*)")re");
  static const std::regex declaration(R"re(/\* .* \((.+):(\d+)\) \*/\s*$)re");
  std::optional<ScriptLocation> last;
  std::string file;
  long number = 1;  // of the line being read, as the preprocessor counts
  std::smatch m;
  for (size_t start = 0; start < source.size();) {
    size_t end = source.find('\n', start);
    if (end == std::string::npos)
      end = source.size();
    std::string text = source.substr(start, end - start);
    start = end + 1;
    if (std::regex_search(text, m, directive)) {
      number = std::stol(m[1].str());
      file = m[2].str();
      continue;
    }
    if (text.rfind("/* ", 0) == 0 && std::regex_search(text, m, declaration)) {
      ScriptLocation where;
      where.file = m[1].str();
      where.line = std::stoi(m[2].str());
      last = where;
    }
    if (file == generated_file && number == line)
      return last;
    number++;
  }
  return std::nullopt;
}

}  // namespace mt
