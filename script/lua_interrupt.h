// How a stop request interrupts Lua: a count hook checks the requests, so
// a busy handler, script body or end handler is stopped within
// milliseconds.
#pragma once
#include <chrono>
#include <string>

#include "run/stop_signals.h"

struct lua_State;

namespace mt {

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
// Arms for lua_close, whose finalizers (__gc) the hook cannot reach: the
// watchdog takes the close as due to stop after `budget`, stop or not.
void arm_lua_close(lua_State *L, std::chrono::milliseconds budget);
inline constexpr std::chrono::milliseconds kLuaWatchdogGrace{700};

// Thrown when Lua code was interrupted: where it was ("x.lua:4:").
struct LuaInterrupted {
  std::string where;
};

}  // namespace mt
