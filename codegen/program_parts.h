// Generated C guards each program so that a compile can leave it out: a
// big script is compiled in two parts at once, each with half the programs
// and everything they share (app/compile_job.h).
#pragma once
#include <array>
#include <string>
#include <vector>

namespace mt {

// The line before a program's definition in generated C, and the line after.
std::string program_guard_open(const std::string &program);
inline constexpr const char *kProgramGuardClose = "#endif /* program */\n";

struct ProgramParts {
  size_t program_bytes = 0;  // C in guarded programs, all told
  // Per part, the -D definitions (NAME or NAME=VALUE) that compile it:
  // each guarded program is in exactly one, the largest first to the
  // part with less C so far.
  std::array<std::vector<std::string>, 2> defines;
};

// SOURCE's programs in two parts; none when it has fewer than two.
ProgramParts program_parts(const std::string &source);

}  // namespace mt
