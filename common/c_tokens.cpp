// Walks C text token by token, far enough to tell identifiers apart.
#include "common/c_tokens.h"

#include <cctype>

namespace mt {
namespace {

bool starts_identifier(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}

bool continues_identifier(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

}  // namespace

CCode c_code(std::string_view text) {
  // Phase 2 first: Clang also takes blanks between the backslash and the
  // line's end for a continuation.
  std::string joined;
  std::vector<int> joined_lines;
  int line = 0;
  for (size_t i = 0; i < text.size(); i++) {
    if (text[i] == '\\') {
      size_t end = text.find_first_not_of(" \t\v\f\r", i + 1);
      if (end != std::string_view::npos && text[end] == '\n') {
        line++;
        i = end;
        continue;
      }
    }
    joined += text[i];
    joined_lines.push_back(line);
    line += text[i] == '\n';
  }
  CCode out;
  auto keep = [&](char c, size_t from) {
    out.code += c;
    out.lines.push_back(joined_lines[from]);
  };
  for (size_t i = 0; i < joined.size();) {
    char c = joined[i];
    if (c == '/' && i + 1 < joined.size() && (joined[i + 1] == '*' || joined[i + 1] == '/')) {
      size_t end = joined[i + 1] == '*' ? joined.find("*/", i + 2) : joined.find('\n', i + 2);
      keep(' ', i);
      i = end == std::string::npos ? joined.size() : end + (joined[i + 1] == '*' ? 2 : 0);
    } else if (c == '"' || c == '\'') {
      // Up to its closing quote, or the line's end, where the compiler ends
      // an unterminated one.
      keep(' ', i);
      keep('0', i);
      for (i++; i < joined.size() && joined[i] != c && joined[i] != '\n';)
        i += joined[i] == '\\' && i + 1 < joined.size() && joined[i + 1] != '\n' ? 2 : 1;
      if (i < joined.size() && joined[i] == c)
        i++;
    } else {
      keep(c, i++);
    }
  }
  return out;
}

std::vector<CIdentifier> c_identifiers(std::string_view text) {
  std::vector<CIdentifier> ids;
  bool after_member_operator = false;
  std::string previous;  // the last token, when it was an identifier
  const std::string code = c_code(text).code;
  for (size_t i = 0; i < code.size();) {
    char c = code[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      i++;
    } else if (starts_identifier(c)) {
      size_t end = i;
      while (end < code.size() && continues_identifier(code[end]))
        end++;
      std::string name = code.substr(i, end - i);
      ids.push_back({name, after_member_operator, previous});
      previous = name;
      after_member_operator = false;
      i = end;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < code.size() && std::isdigit((unsigned char)code[i + 1]))) {
      // A number, suffixes, hex digits, fractions and exponents included.
      while (i < code.size() && (continues_identifier(code[i]) || code[i] == '.' ||
                                 ((code[i] == '+' || code[i] == '-') &&
                                  std::string_view("eEpP").find(code[i - 1]) != std::string::npos)))
        i++;
      previous.clear();
      after_member_operator = false;
    } else {
      after_member_operator = c == '.' || (c == '-' && i + 1 < code.size() && code[i + 1] == '>');
      i += c == '-' && after_member_operator ? 2 : 1;
      previous.clear();
    }
  }
  return ids;
}

bool is_c_identifier(std::string_view text) {
  if (text.empty() || !starts_identifier(text[0]))
    return false;
  for (char c : text)
    if (!continues_identifier(c))
      return false;
  return true;
}

}  // namespace mt
