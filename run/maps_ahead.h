// The maps of the object a warm start expects to load, made on a thread
// while the script is declared, its C found and the object checked:
// creating uring's maps took 10 of the 80 ms its warm start took to
// attach (issue 18). The guess is checked: the maps go to the load only
// when the object it loads is the one they were made for.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "run/shared_maps.h"

namespace mt {

class MapsAhead {
 public:
  // Fetches the expected object, on the thread; none when there is none.
  using Fetch = std::function<std::optional<std::vector<char>>()>;
  // Starts making the maps of the object FETCH gives, the one cached as
  // KEY, sized for a run with FILTER_TARGETS and MARKS (size_maps_for_run).
  MapsAhead(std::string key, Fetch fetch, bool filter_targets, bool marks);
  // Stops the thread between two maps, and waits for it unless a stop
  // signal came: the process then leaves at once.
  ~MapsAhead();
  MapsAhead(const MapsAhead &) = delete;
  MapsAhead &operator=(const MapsAhead &) = delete;

  // The maps made, if KEY and OBJECT are those of the object they were
  // made for; none otherwise (they are closed, and the thread stopped
  // between two maps). Throws StoppedBeforeTracing on a stop signal while
  // waiting.
  MapsMadeAhead take(const std::string &key, const std::vector<char> &object);

 private:
  struct State;
  std::string key_;
  std::shared_ptr<State> state_;  // the thread's too: it may outlive this on a stop
  std::thread thread_;
};

}  // namespace mt
