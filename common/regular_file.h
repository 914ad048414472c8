// Opens a path for reading only when it is a regular file: never a device
// (opening one can act: a watchdog arms), a FIFO (blocks), a directory, nor
// a file the kernel serves (/proc/kcore, sysfs) or a FUSE process does,
// whatever the path names at the moment of opening.
#pragma once
#include <sys/stat.h>

#include <string>

#include "common/unique_fd.h"

namespace mt {

// Opened O_PATH (which opens nothing), checked, then opened for reading
// through that descriptor. Empty, with errno set, when `path` cannot be
// opened or is no such file (EINVAL); `st` receives its stat.
UniqueFd open_regular_file(const std::string &path, struct stat *st = nullptr);

}  // namespace mt
