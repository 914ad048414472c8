// A stop asked for by a signal or due at a deadline.
#include "common/stop_request.h"

#include <atomic>

namespace mt {
namespace {

std::atomic<bool> g_requested{false};  // lock-free: set in signal handlers
std::atomic<std::chrono::steady_clock::rep> g_deadline{
    std::chrono::steady_clock::time_point::max().time_since_epoch().count()};

}  // namespace

void request_stop() {
  g_requested.store(true, std::memory_order_relaxed);
}

void set_stop_deadline(std::chrono::steady_clock::time_point deadline) {
  g_deadline.store(deadline.time_since_epoch().count(), std::memory_order_relaxed);
}

bool stop_requested() {
  return g_requested.load(std::memory_order_relaxed) ||
         std::chrono::steady_clock::now().time_since_epoch().count() >=
             g_deadline.load(std::memory_order_relaxed);
}

}  // namespace mt
