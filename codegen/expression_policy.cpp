// Refuses preprocessor directives and _Pragma in a script's C, and lists its source files.
#include "codegen/expression_policy.h"

#include <functional>

#include "common/error.h"

namespace mt {

namespace {

// Calls `visit` with every piece of C text the declaration holds, and where
// it stands in the script.
void for_each_c_text(
    const Declaration &decl,
    const std::function<void(const std::string &, const ScriptLocation &)> &visit) {
  auto expression = [&](const Expression &e) { visit(e.text, e.where); };
  auto captures = [&](const std::vector<Capture> &list) {
    for (const Capture &c : list) {
      expression(c.expr);
      visit(c.c_type, c.expr.where);
    }
  };
  for (const ProbeDecl &p : decl.probes) {
    expression(p.guard);
    expression(p.predicate);
    expression(p.action);
    captures(p.captures);
  }
  for (const MapDecl &m : decl.maps) {
    expression(m.key_type);
    expression(m.value_type);
    for (const auto &[name, type] : m.key_fields)
      visit(type, m.where);
    for (const auto &[name, type] : m.value_fields)
      visit(type, m.where);
  }
  for (const AggregationDecl &a : decl.aggregations) {
    captures(a.keys);
    expression(a.value);
  }
  for (const LatencyDecl &l : decl.latencies) {
    captures(l.key);
    captures(l.stop_key);
    captures(l.carry);
  }
}

// The line (0-based, within `text`) of the first directive, and its text.
bool find_directive(const std::string &text, int &line, std::string &directive) {
  if (text.find("_Pragma") != std::string::npos) {
    line = 0;
    for (size_t i = 0; i < text.find("_Pragma"); i++)
      line += text[i] == '\n';
    directive = "_Pragma";
    return true;
  }
  line = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    size_t first = text.find_first_not_of(" \t\v\f\r", start);
    if (first != std::string::npos && first < end &&
        (text[first] == '#' || text.compare(first, 2, "%:") == 0)) {
      size_t word = text.find_first_not_of(" \t#%:", first);
      size_t word_end =
          word == std::string::npos ? end : std::min(end, text.find_first_of(" \t(\"<", word));
      directive = "#" + (word < end ? text.substr(word, word_end - word) : std::string());
      return true;
    }
    start = end + 1;
    line++;
  }
  return false;
}

}  // namespace

void check_no_directives(const Declaration &decl) {
  for_each_c_text(decl, [](const std::string &text, const ScriptLocation &where) {
    int line;
    std::string directive;
    if (!find_directive(text, line, directive))
      return;
    ScriptLocation at = where;
    at.column = 0;
    if (at.line > 0)
      at.line += line;
    throw Error("a preprocessor directive (" + directive +
                    ") is not allowed in a script's C; write expressions and statements (run "
                    "with --unsafe to allow it)",
                at);
  });
}

std::set<std::string> source_files(const Declaration &decl) {
  std::set<std::string> files;
  if (!decl.script_path.empty())
    files.insert(decl.script_path);
  for_each_c_text(decl, [&](const std::string &, const ScriptLocation &where) {
    if (!where.file.empty())
      files.insert(where.file);
  });
  for (const ProbeDecl &p : decl.probes)
    if (!p.where.file.empty())
      files.insert(p.where.file);
  return files;
}

}  // namespace mt
