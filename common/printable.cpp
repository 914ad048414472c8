// Replaces control characters in text that is printed as it is.
#include "common/printable.h"

namespace mt {

std::string printable(std::string text) {
  for (char &c : text)
    if (static_cast<unsigned char>(c) < 32 || c == 127)
      c = '?';
  return text;
}

}  // namespace mt
