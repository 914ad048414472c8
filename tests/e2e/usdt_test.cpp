// USDT probes (issue 19, point 2) on usdt_probes, a workload of ours built
// with sys/sdt.h: listed, attached, their arguments typed by their notes,
// semaphores set while traced, and a running process traced with -p.
#include <fstream>
#include <thread>

#include "tests/e2e/e2e_support.h"

namespace e2e {
namespace {

class E2eUsdt : public BpfTest {
 protected:
  std::string probe(const std::string &name) const {
    return "usdt:" + workload("usdt_probes") + ":moontrace:" + name;
  }
};

TEST_F(E2eUsdt, ProbesAreListedWithTheirArguments) {
  Result all = run(mt({"-lv", "usdt:" + workload("usdt_probes") + ":*"}));
  ASSERT_EQ(all.exit_code, 0) << all;
  EXPECT_EQ(all.out, probe("guarded") + "\n    __s64 arg0\n" + probe("name") +
                         "\n    __u64 arg0\n" + probe("tick") +
                         "\n    __s64 arg0\n    __s32 arg1\n")
      << all;
  Result one = run(mt({"-l", "usdt:" + workload("usdt_probes") + ":moontrace:t*"}));
  ASSERT_EQ(one.exit_code, 0) << one;
  EXPECT_EQ(one.out, probe("tick") + "\n") << one;
}

TEST_F(E2eUsdt, ArgumentsArriveTypedAndSemaphoresAreSetWhileTraced) {
  TempDir tmp;
  tmp.write("t.lua", "probe(\"" + probe("tick") +
                         "\", { capture = { i = \"args.arg0\", neg = \"args.arg1\" } })\n"
                         "probe(\"" +
                         probe("name") + "\", { capture = { s = \"str(args.arg0)\" } })\n");
  Result r = run(mt({"-c", workload("usdt_probes") + " 5", tmp.file("t.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "i"), sequence(1, 5)) << r;
  int negatives = 0, names = 0;
  for (const auto &line : lines(r.out)) {
    negatives += contains(line, "neg=-");
    names += line == "s=usdt hello";
  }
  EXPECT_EQ(negatives, 5) << r;  // a signed 4-byte argument
  EXPECT_EQ(names, 5) << r;      // a user pointer, read by str()
  // moontrace:guarded is not traced: its semaphore stays 0.
  EXPECT_TRUE(contains(r.out, "guarded 0\n")) << r;

  tmp.write("g.lua", "probe(\"" + probe("guarded") + "\", { capture = { g = \"args.arg0\" } })\n");
  Result guarded = run(mt({"-c", workload("usdt_probes") + " 4", tmp.file("g.lua")}));
  ASSERT_EQ(guarded.exit_code, 0) << guarded;
  EXPECT_TRUE(contains(guarded.out, "guarded 4\n")) << guarded;
  EXPECT_EQ(values_of(guarded.out, "g"), sequence(10, 40, 10)) << guarded;
}

TEST_F(E2eUsdt, ARunningProcessIsTracedWithP) {
  Process workload_run({{workload("usdt_probes"), "3", "-s"}});
  // Stopped by itself, once loaded: its semaphores are in memory already.
  auto stopped = [&] {
    std::ifstream stat("/proc/" + std::to_string(workload_run.pid()) + "/stat");
    std::string pid, comm, state;
    return stat >> pid >> comm >> state && state == "T";
  };
  for (int i = 0; i < 500 && !stopped(); i++)
    std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(stopped());
  TempDir tmp;
  tmp.write("t.lua", "probe(\"" + probe("guarded") + "\", { capture = { g = \"args.arg0\" } })\n");
  Process tracer(mt({"-p", std::to_string(workload_run.pid()), tmp.file("t.lua")}));
  ASSERT_TRUE(tracer.wait_for_err("attached")) << tracer.err();
  workload_run.resume();
  Result w = workload_run.wait();
  EXPECT_EQ(w.out, "guarded 3\n") << w;
  Result r = tracer.wait();  // stops when the process exits
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "g"), sequence(10, 30, 10)) << r;
}

TEST_F(E2eUsdt, AProbeTheBinaryLacksIsOneLineAtTheScriptsLine) {
  TempDir tmp;
  tmp.write("t.lua", "\nprobe(\"" + probe("nope") + "\", { capture = { \"pid\" } })\n");
  Result r = run(mt({tmp.file("t.lua")}));
  EXPECT_EQ(r.exit_code, 1) << r;
  ASSERT_EQ(r.err_lines().size(), 1u) << r;
  EXPECT_TRUE(contains(r.err, "t.lua:2:")) << r;
  EXPECT_TRUE(contains(r.err, "no such USDT probe in " + workload("usdt_probes"))) << r;
}

}  // namespace
}  // namespace e2e
