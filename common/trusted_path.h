// Whether a file may be loaded by a process that may be root: the file and
// every directory from / down to it must be changeable only by root or by
// a trusted owner, so that nobody else can plant or alter what is loaded.
#pragma once
#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace mt {

// Owners whose scripts and modules are loaded: root, the effective user
// and, when root runs under sudo, the invoking user (SUDO_UID).
std::vector<uid_t> script_owners();
// The invoking user under sudo (SUDO_UID, SUDO_GID) when the effective
// user is root; nullopt otherwise.
std::optional<std::pair<uid_t, gid_t>> sudo_user();

// "owner bob uid 1001, mode 0777" (no name when uid has none).
std::string owner_and_mode(const struct stat &st);
// The name of `uid`, or its number.
std::string user_name(uid_t uid);

// What is wrong with something found on the way, and how to fix it.
struct Distrust {
  std::string what;  // "/tmp/m is writable by other users (owner bob uid 1001, mode 0777)"
  std::string fix;   // "chmod go-w /tmp/m or move the file"
};

// Why the directory `path` (stat `st`) lets a user other than root and
// `owners` change what it holds; nullopt when it does not. Sticky
// directories (/tmp) are writable by all yet keep others' files apart.
// `moved` names what the fix moves ("the file").
std::optional<Distrust> distrust_directory(const std::string &path, const struct stat &st,
                                           const std::vector<uid_t> &owners,
                                           const std::string &moved = "the file");
// Why the file `path` may not be loaded: not a regular file, owned by no
// one of `owners`, or writable by group or others.
std::optional<Distrust> distrust_file(const std::string &path, const struct stat &st,
                                      const std::vector<uid_t> &owners);

// Throws mt::Error "refusing to VERB_AND_SUBJECT: WHAT; FIX".
[[noreturn]] void refuse(const std::string &verb_and_subject, const Distrust &why);

// The directory `path`, resolved (realpath), opened after checking every
// directory from / down to it, each opened below the last without
// following links (no race between check and use). Throws mt::Error
// "refusing to VERB_AND_SUBJECT: ..." or "cannot read PATH: ...".
UniqueFd open_trusted_directory(const std::string &path, const std::vector<uid_t> &owners,
                                const std::string &verb_and_subject,
                                const std::string &moved = "the file");

// The regular file `path` opened for reading, after the same checks for
// its directories and distrust_file() for the opened file itself.
UniqueFd open_trusted_file(const std::string &path, const std::vector<uid_t> &owners);

// Everything readable from `fd`; throws mt::Error naming `path` on error.
std::string read_whole_file(int fd, const std::string &path);

}  // namespace mt
