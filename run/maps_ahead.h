// The maps of the object a warm start expects to load, made on a thread
// while the script is declared, its C found and the object checked:
// creating uring's maps took 10 of the 80 ms its warm start took to
// attach (issue 18). The guess is checked: the maps go to the load only
// when the object it loads is the one they were made for.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/unique_fd.h"

namespace mt {

class MapsAhead {
 public:
  // Fetches the expected object, on the thread; none when there is none.
  using Fetch = std::function<std::optional<std::vector<char>>()>;
  // Starts making the maps of the object FETCH gives, sized for a run
  // with FILTER_TARGETS and MARKS (size_maps_for_run).
  MapsAhead(Fetch fetch, bool filter_targets, bool marks);
  ~MapsAhead();  // waits for the thread: at most the time to make the maps
  MapsAhead(const MapsAhead &) = delete;
  MapsAhead &operator=(const MapsAhead &) = delete;

  // The maps made, by name, if OBJECT is the object they were made for;
  // none otherwise (they are closed). Their descriptors stay this one's.
  std::map<std::string, int> made_for(const std::vector<char> &object);

 private:
  std::vector<char> object_;
  std::map<std::string, UniqueFd> maps_;
  std::thread thread_;
};

}  // namespace mt
