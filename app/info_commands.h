// The commands that print what there is and run no script: --help,
// --version, list, dump and -l.
#pragma once
#include <optional>

#include "app/cli.h"

namespace mt {

// The exit status of the one asked for, or nullopt when none was.
std::optional<int> run_info_command(const Options &options);

}  // namespace mt
