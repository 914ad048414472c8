// Requests to stop, and how long the stop may take. SIGINT, SIGTERM and
// SIGHUP are noted by a handler; Lua checks the requests from a count hook,
// so a busy handler, script body or end handler is stopped within
// milliseconds, and waits (for a compile, say) check them between naps.
#pragma once
#include <chrono>
#include <string>

struct lua_State;

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

// Lua is interrupted once more than `tolerated` stop signals have arrived
// or `deadline` has passed.
void set_lua_limits(int tolerated_signals, StopClock::time_point deadline);
bool lua_must_stop();
// Lets `L` be interrupted: a count hook raises an error when
// lua_must_stop(); reset before each call.
void arm_lua_interrupt(lua_State *L);
// Whether the hook interrupted Lua since arm_lua_interrupt().
bool lua_was_interrupted();
// Marks the end of the call armed last. A call that is still running
// kLuaWatchdogGrace after it was due to stop is inside a C function the
// hook cannot reach (string.find on a pattern that backtracks for ever,
// say): a watchdog thread then ends moontrace with one line and status 1,
// within the second a stop may take, leaving the output as last written
// (whole records, at most 1 s old).
void lua_call_ended();
inline constexpr std::chrono::milliseconds kLuaWatchdogGrace{700};

// Thrown when Lua code was interrupted: where it was ("x.lua:4:").
struct LuaInterrupted {
  std::string where;
};

// Thrown when a stop signal arrives before tracing began: nothing was
// written, and moontrace exits with 128 + signal, as shells do.
struct StoppedBeforeTracing {
  int signal;
};
// Throws StoppedBeforeTracing if a stop signal has arrived.
void stop_if_signalled_before_tracing();

}  // namespace mt
