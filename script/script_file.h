// Reads a script from disk with limits: a script is a regular file of at
// most kMaxScriptBytes, so that /dev/zero, a FIFO or an endless /proc file
// given as a script is refused instead of read until memory runs out.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

namespace mt {

inline constexpr size_t kMaxScriptBytes = size_t(16) << 20;

// The text of the script at `path`; nothing if no file is there. Throws
// mt::Error naming the path for a directory, a device or other non-regular
// file, a file larger than kMaxScriptBytes, or one that cannot be read.
std::optional<std::string> read_script_file(const std::string &path,
                                            size_t max_bytes = kMaxScriptBytes);

}  // namespace mt
