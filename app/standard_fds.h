// Standard descriptors 0-2 that moontrace was started without are held
// open the other way (stdin write-only, stdout and stderr read-only).
//
// Started with stderr (or stdout, stdin) closed, the next file opened would
// take its number: a cache file, a trace being written, a BPF object, the
// -c command's start pipe, and messages for stderr would go into it. Held
// the other way, it still refuses (EBADF) as a closed descriptor would,
// and nothing else takes its place; glibc does the same for set-user-ID
// programs.
#pragma once

namespace mt {

void hold_closed_standard_fds();

}  // namespace mt
