// Which BPF helpers a script's C may call without --unsafe: those that
// tracing needs (reading, timing, identifying, keeping state, sending
// records), and nothing that changes what the kernel or a process does.
#pragma once
#include <string>
#include <vector>

namespace mt {

struct AllowedHelper {
  int id;              // the helper's stable number (enum bpf_func_id)
  const char *reason;  // what tracing uses it for, in a word
};

// Every allowed helper, by id.
const std::vector<AllowedHelper> &allowed_helpers();
bool helper_allowed(long id);
// "bpf_send_signal", or "helper 250" for a number this build has no name for.
std::string helper_name(long id);

}  // namespace mt
