// A thread of the test's process that lives, doing nothing, until the
// object goes: its id, for tests of what a thread's id is told from.
#pragma once
#include <unistd.h>

#include <future>
#include <thread>

namespace mt::testing {

class WaitingThread {
 public:
  WaitingThread()
      : thread_([this] {
          tid_.set_value(gettid());
          done_.get_future().wait();
        }) {}
  ~WaitingThread() {
    done_.set_value();
    thread_.join();
  }
  int tid() { return tid_future_.get(); }

 private:
  std::promise<int> tid_;
  std::future<int> tid_future_ = tid_.get_future();
  std::promise<void> done_;
  std::thread thread_;  // last: it starts once the promises are made
};

}  // namespace mt::testing
