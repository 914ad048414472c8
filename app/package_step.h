// Packages: moontrace pack writes one (common/package_file.h); a run of
// NAME.mtpkg reads it, checked like a script and against --expect-digest,
// and takes its objects where it would compile.
#pragma once
#include <string>
#include <vector>

#include "app/cli.h"
#include "codegen/c_generator.h"
#include "common/package_file.h"
#include "script/lua_sandbox.h"

namespace mt {

// The package at PATH, opened as a script is (trusted_path.h), its sha256
// compared with EXPECTED_SHA256 when one is given, its signature
// (PATH.sig) verified against the allowed SIGNERS when given (by
// ssh-keygen -Y verify, namespace "moontrace"), and decoded. Throws
// mt::Error in one line.
Package load_package(const std::string &path, const std::string &expected_sha256,
                     const std::string &signers);

// The Lua sandbox of a package's run: its modules, and no file.
SandboxOptions package_sandbox(const Package &package, bool unsafe);

// The package's object for GENERATED (compiled from the same C), or an
// error naming what the package was packed for.
std::vector<char> object_from_package(const GeneratedProgram &generated, const Package &package,
                                      const std::string &path);

// A failure already reported on stderr (by a child): exit 1, say nothing.
struct ReportedFailure {};

// moontrace pack: returns the exit status.
int run_pack(const Options &options);

}  // namespace mt
