// Text from another user (a binary's symbols, a delegated cgroup's names)
// made safe to print: nothing in it can drive a terminal or break a line.
#pragma once
#include <string>

namespace mt {

// Control characters (and DEL) become '?'.
std::string printable(std::string text);

}  // namespace mt
