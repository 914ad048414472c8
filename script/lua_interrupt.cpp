// Arms a Lua count hook that stops overdue calls, plus a watchdog that exits if one hangs.
#include "script/lua_interrupt.h"

#include <unistd.h>

#include <atomic>
#include <lua.hpp>
#include <mutex>
#include <thread>

namespace mt {
namespace {

std::atomic<int> g_tolerated{0};
std::atomic<StopClock::rep> g_deadline{StopClock::time_point::max().time_since_epoch().count()};
bool g_interrupted = false;
// The Lua call running now, numbered, or 0 between calls.
std::atomic<uint64_t> g_running_call{0};
// When the running call is due to end whatever the stop requests (a
// close's finalizers), or max.
constexpr StopClock::rep kNever = StopClock::time_point::max().time_since_epoch().count();
std::atomic<StopClock::rep> g_call_deadline{kNever};
uint64_t g_calls = 0;

// Instructions between two checks: about 0.1 ms of Lua, and a check costs
// one clock read.
constexpr int kCheckEvery = 10000;

void interrupt_hook(lua_State *L, lua_Debug *) {
  if (!lua_must_stop())
    return;
  g_interrupted = true;
  // Raise again at the very next instruction: a pcall in the script that
  // caught this error cannot keep the loop around it going.
  lua_sethook(L, interrupt_hook, LUA_MASKCOUNT, 1);
  luaL_where(L, 0);  // the running function: a hook has no frame of its own
  lua_pushstring(L, "interrupted");
  lua_concat(L, 2);
  lua_error(L);
}

// Ends moontrace when one Lua call stays overdue for kLuaWatchdogGrace.
[[noreturn]] void watch_lua_calls() {
  uint64_t overdue_call = 0;
  StopClock::time_point overdue_since;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    uint64_t call = g_running_call;
    bool due = lua_must_stop() || StopClock::now().time_since_epoch().count() >= g_call_deadline;
    if (!call || !due) {
      overdue_call = 0;
      continue;
    }
    if (call != overdue_call) {
      overdue_call = call;
      overdue_since = StopClock::now();
    } else if (StopClock::now() - overdue_since >= kLuaWatchdogGrace) {
      static const char kLine[] =
          "moontrace: the script is stuck in a Lua library function and cannot be stopped; "
          "leaving with the output as last written\n";
      (void)!write(STDERR_FILENO, kLine, sizeof kLine - 1);
      _exit(1);
    }
  }
}

}  // namespace

void set_lua_limits(int tolerated_signals, StopClock::time_point deadline) {
  g_tolerated = tolerated_signals;
  g_deadline = deadline.time_since_epoch().count();
}

bool lua_must_stop() {
  if (stop_signal_count() > g_tolerated)
    return true;
  StopClock::rep deadline = g_deadline;
  return deadline != StopClock::time_point::max().time_since_epoch().count() &&
         StopClock::now().time_since_epoch().count() >= deadline;
}

void arm_lua_interrupt(lua_State *L) {
  static std::once_flag watchdog;
  std::call_once(watchdog, [] { std::thread(watch_lua_calls).detach(); });
  g_running_call = ++g_calls;
  g_interrupted = false;
  lua_sethook(L, interrupt_hook, LUA_MASKCOUNT, kCheckEvery);
}

bool lua_was_interrupted() {
  return g_interrupted;
}

void lua_call_ended() {
  g_running_call = 0;
  g_call_deadline = kNever;
}

void arm_lua_close(lua_State *L, std::chrono::milliseconds budget) {
  arm_lua_interrupt(L);
  g_call_deadline = (StopClock::now() + budget).time_since_epoch().count();
}

}  // namespace mt
