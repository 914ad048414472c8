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

std::vector<CIdentifier> c_identifiers(std::string_view text) {
  std::vector<CIdentifier> ids;
  bool after_member_operator = false;
  std::string previous;  // the last token, when it was an identifier
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      i++;
    } else if (c == '/' && i + 1 < text.size() && (text[i + 1] == '*' || text[i + 1] == '/')) {
      // A comment, whose words are none of the code's (an apostrophe in
      // it is no character literal).
      size_t end = text[i + 1] == '*' ? text.find("*/", i + 2) : text.find('\n', i + 2);
      i = end == std::string_view::npos ? text.size() : end + (text[i + 1] == '*' ? 2 : 1);
    } else if (starts_identifier(c)) {
      size_t end = i;
      while (end < text.size() && continues_identifier(text[end]))
        end++;
      std::string name(text.substr(i, end - i));
      ids.push_back({name, after_member_operator, previous});
      previous = name;
      after_member_operator = false;
      i = end;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < text.size() && std::isdigit((unsigned char)text[i + 1]))) {
      // A number, suffixes, hex digits, fractions and exponents included.
      while (i < text.size() && (continues_identifier(text[i]) || text[i] == '.' ||
                                 ((text[i] == '+' || text[i] == '-') &&
                                  std::string_view("eEpP").find(text[i - 1]) != std::string::npos)))
        i++;
      previous.clear();
      after_member_operator = false;
    } else if (c == '"' || c == '\'') {
      for (i++; i < text.size() && text[i] != c;)
        i += text[i] == '\\' ? 2 : 1;
      i++;
      previous.clear();
      after_member_operator = false;
    } else {
      after_member_operator = c == '.' || (c == '-' && i + 1 < text.size() && text[i + 1] == '>');
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
