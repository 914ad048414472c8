// Requests to stop: SIGINT, SIGTERM and SIGHUP are noted by a handler,
// and waits (for a compile, say) check them between naps
// (script/lua_interrupt.h stops Lua on them).
#pragma once
#include <chrono>
#include <string>

namespace mt {

using StopClock = std::chrono::steady_clock;

// Ignores SIGPIPE: a closed pipe is a write error, not a death.
void ignore_sigpipe();
// Installs the handlers of the stop signals (no SA_RESTART: a signal
// wakes a poll; SIGHUP stays ignored under nohup) and a SIGCHLD handler
// that wakes it when a -c command exits.
void install_stop_signal_handlers();
// In a child about to exec: the dispositions moontrace changed back to
// what it inherited (the default, or ignored under nohup), nothing
// blocked.
void restore_inherited_signals();
// The first stop signal received, or 0; how many have arrived.
int stop_signal();
int stop_signal_count();
// "SIGINT", "SIGTERM", ...
std::string signal_name(int sig);
// "Segmentation fault", as strsignal says it.
std::string signal_description(int sig);

// Thrown when a stop signal arrives before tracing began: nothing was
// written, and moontrace exits with 128 + signal, as shells do.
struct StoppedBeforeTracing {
  int signal;
};
// Throws StoppedBeforeTracing if a stop signal has arrived.
void stop_if_signalled_before_tracing();

}  // namespace mt
