// libbpf's messages: kept per thread for errors (the verifier's log goes
// there) instead of printed, by one callback installed once. libbpf 1.1
// reads its callback without synchronization, and moontrace calls libbpf
// on several threads at once (rings, maps made ahead, two halves of a
// load), so the callback is never changed once installed.
#pragma once
#include <string>

namespace mt {

// Installs the callback, once; every user of libbpf calls it first.
void keep_libbpf_messages();

// This thread's messages since it last cleared them.
std::string &libbpf_messages();

}  // namespace mt
