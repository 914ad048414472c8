// Finds the guarded programs of generated C and deals them into two parts.
#include "codegen/program_parts.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <utility>

namespace mt {

namespace {

// A program is left out of a compile that defines MT_SKIP_<its name>.
constexpr std::string_view kSkipMacro = "MT_SKIP_";
constexpr std::string_view kOpen = "#ifndef MT_SKIP_";

}  // namespace

std::string program_guard_open(const std::string &program) {
  return std::string(kOpen) + program + "\n";
}

ProgramParts program_parts(const std::string &source) {
  // Whole lines only: a script's C cannot hold a directive (without
  // --unsafe). A program may have several guarded pieces (the functions of
  // the probes sharing a tracepoint go with its program); each name goes
  // to exactly one part.
  std::map<std::string, size_t> bytes_of;
  ProgramParts parts;
  std::string_view text(source), closing(kProgramGuardClose);
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    std::string_view line = text.substr(at, end == std::string_view::npos ? end : end - at);
    size_t next = end == std::string_view::npos ? text.size() : end + 1;
    if (line.starts_with(kOpen)) {
      size_t closed = std::min(text.find(closing, next), text.size());
      bytes_of[std::string(line.substr(kOpen.size()))] += closed - next;
      parts.program_bytes += closed - next;
    }
    at = next;
  }
  if (bytes_of.size() < 2)
    return parts;
  std::vector<std::pair<size_t, std::string>> programs;  // (bytes, name)
  for (const auto &[name, bytes] : bytes_of)
    programs.emplace_back(bytes, name);
  std::sort(programs.begin(), programs.end(), [](const auto &a, const auto &b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::array<size_t, 2> dealt = {0, 0};
  for (const auto &[bytes, name] : programs) {
    int to = dealt[0] <= dealt[1] ? 0 : 1;
    dealt[to] += bytes;
    parts.defines[1 - to].push_back(std::string(kSkipMacro) + name);
  }
  for (int part : {0, 1})
    parts.defines[part].push_back("MT_PART=" + std::to_string(part + 1));
  return parts;
}

}  // namespace mt
