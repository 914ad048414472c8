// Refuses preprocessor directives and _Pragma in a script's C, and lists its source files.
#include "codegen/expression_policy.h"

#include <functional>

#include "common/c_tokens.h"
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
// Outside a macro, which a script cannot define, no # belongs in C code,
// so any # (or %:) there is taken for one, wherever it stands on its line:
// after a comment (/**/ #include), or on a line a backslash continued.
bool find_directive(const std::string &text, int &line, std::string &directive) {
  CCode c = c_code(text);
  size_t at = c.code.find_first_of("#%");
  while (at != std::string::npos && c.code[at] == '%' && c.code.compare(at, 2, "%:") != 0)
    at = c.code.find_first_of("#%", at + 1);
  if (at != std::string::npos) {
    line = c.lines[at];
    size_t word = c.code.find_first_not_of(" \t#%:", at);
    size_t end = c.code.find_first_not_of(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", word);
    directive = "#" + (word == std::string::npos ? std::string() : c.code.substr(word, end - word));
    return true;
  }
  for (const CIdentifier &id : c_identifiers(text))
    if (id.name == "_Pragma") {
      size_t pragma = c.code.find("_Pragma");
      line = pragma == std::string::npos ? 0 : c.lines[pragma];
      directive = "_Pragma";
      return true;
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
