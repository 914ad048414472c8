// Packages: moontrace pack writes one (common/package_file.h); a run of
// NAME.mtpkg reads it, checked like a script and against --expect-digest,
// and takes its objects where it would compile.
#pragma once
#include <string>
#include <vector>

#include "app/cli.h"
#include "codegen/c_generator.h"
#include "common/package_file.h"

namespace mt {

// The package at PATH, opened as a script is (trusted_path.h), its sha256
// compared with EXPECTED_SHA256 when one is given, and decoded. Throws
// mt::Error in one line.
Package load_package(const std::string &path, const std::string &expected_sha256);

// The package's object for GENERATED (compiled from the same C), or an
// error naming what the package was packed for.
std::vector<char> object_from_package(const GeneratedProgram &generated, const Package &package,
                                      const std::string &path);

// moontrace pack: returns the exit status.
int run_pack(const Options &options);

}  // namespace mt
