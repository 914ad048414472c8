// Stops with an output that waits on its reader: a FIFO not opened yet,
// or one whose reader stopped reading. A stop still ends the run at once.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "tests/e2e/e2e_support.h"

namespace e2e {
namespace {

class E2eStalledOutput : public BpfTest {};

// A trace to a FIFO whose reader stopped reading: a stop (SIGINT, or the
// end of --duration, which the loop cannot see while a write waits) gives
// it up a second later, as a write error (before, only SIGKILL ended a
// gzipped one: its writer waited on the compressing thread, blocked in
// its write).
TEST_F(E2eStalledOutput, AReaderThatStoppedReadingIsGivenUpAtTheStop) {
  for (std::string name : {"t.fxt", "t.fxt.gz"})
    for (bool by_duration : {false, true}) {
      SCOPED_TRACE(name + (by_duration ? " --duration" : " SIGINT"));
      TempDir dir;
      std::string fifo = dir.file(name);
      ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
      int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // that never reads
      ASSERT_GE(reader, 0);
      std::vector<std::string> argv = {"-o", fifo, "-c", workload("nop_storm") + " 30s 32"};
      if (by_duration)
        argv.insert(argv.end(), {"--duration", "2"});
      argv.push_back("uring");
      Process tracer(mt(argv));
      ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
      if (!by_duration) {
        std::this_thread::sleep_for(1s);
        tracer.signal(SIGINT);
      }
      Result r = tracer.wait(10s);
      close(reader);
      EXPECT_FALSE(r.timed_out) << r;
      EXPECT_EQ(r.exit_code, 1) << r;
      EXPECT_TRUE(contains(
          r.err, "cannot write " + fifo + ": its reader took nothing for a second after the stop"))
          << r;
    }
}

// A FIFO's open waits for a reader: a stop signal then is a stop before
// tracing began (exit 130), not a write error.
TEST_F(E2eStalledOutput, AStopWhileAFifoWaitsForItsReaderIsAStopBeforeTracing) {
  TempDir dir;
  std::string fifo = dir.file("t.fxt");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Process tracer(mt({"-o", fifo, "-c", "true", "uring"}));
  std::this_thread::sleep_for(1s);
  tracer.signal(SIGINT);
  Result r = tracer.wait(10s);
  EXPECT_EQ(r.exit_code, 130) << r;
  EXPECT_EQ(r.err, "moontrace: stopped before tracing began (SIGINT)\n") << r;
}

}  // namespace
}  // namespace e2e
