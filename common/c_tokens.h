// The one scanner of C text that the stages share: the identifiers of an
// expression, with what stands before each, string and character literals
// and numbers skipped.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mt {

struct CIdentifier {
  std::string name;
  bool member = false;   // after . or ->: a struct or union member's name
  std::string previous;  // the identifier just before it ("struct" in "struct x"), or ""
};

// C text as the compiler reads its code: lines a backslash continues
// joined (translation phase 2), each comment one space, each string or
// character literal " 0". lines[i]: the line (0-based) of the text that
// code[i] came from.
struct CCode {
  std::string code;
  std::vector<int> lines;
};
CCode c_code(std::string_view text);

std::vector<CIdentifier> c_identifiers(std::string_view text);
bool is_c_identifier(std::string_view text);

}  // namespace mt
