// Maps expression text and generated #line positions back to script lines and columns.
#include "codegen/source_locator.h"

#include <algorithm>
#include <cstring>
#include <regex>
#include <string_view>

namespace mt {

namespace {

size_t line_start(const std::string &source, int line) {
  size_t pos = 0;
  for (int l = 1; l < line && pos != std::string::npos; l++) {
    pos = source.find('\n', pos);
    if (pos != std::string::npos)
      pos++;
  }
  return pos;
}

}  // namespace

ScriptLocation locate_expression(const std::string &source, const std::string &expr,
                                 ScriptLocation near) {
  if (expr.empty() || near.line <= 0)
    return near;
  // Where EXPR stands quoted, starting in [FROM, UNTIL).
  auto quoted_at = [&](size_t from, size_t until) {
    std::string_view text = std::string_view(source).substr(
        0, until == std::string::npos ? until : until + expr.size() - 1);
    for (size_t pos = text.find(expr, from); pos != std::string::npos;
         pos = text.find(expr, pos + 1)) {
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
  // then above it for expressions built elsewhere in the script (most are
  // found nowhere: the text is searched once).
  size_t start = std::min(line_start(source, near.line), source.size());
  size_t best = quoted_at(start, std::string::npos);
  if (best == std::string::npos)
    best = quoted_at(0, start);
  if (best == std::string::npos)
    return near;
  // Counted with memchr: a warm start of uring locates hundreds of these.
  ScriptLocation found = near;
  found.line = 1;
  const char *text = source.data(), *end = text + best, *line = text;
  while (const char *newline = static_cast<const char *>(std::memchr(line, '\n', end - line))) {
    found.line++;
    line = newline + 1;
  }
  found.column = static_cast<int>(end - line) + 1;
  return found;
}

std::string source_line(const std::string &source, int line) {
  size_t start = line_start(source, line);
  if (start == std::string::npos || start >= source.size())
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
