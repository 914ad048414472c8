// Whether the run is to stop: a stop signal came, or --duration passed.
// Waits that could last for ever (a reader that stopped reading) end on it.
#pragma once
#include <chrono>

namespace mt {

// From a signal handler too.
void request_stop();
void set_stop_deadline(std::chrono::steady_clock::time_point deadline);
bool stop_requested();

}  // namespace mt
