// The loss report that ends every run, as text and as JSON.
#include "app/loss_report.h"

#include <gtest/gtest.h>

namespace mt {
namespace {

TEST(LossReport, NamesEachSlotThatLostRecords) {
  LossCounts counts{1000, 0, {0, 7, 2}, {"tracepoint:a:b", "tracepoint:c:d"}};
  EXPECT_EQ(loss_text(counts),
            "moontrace: 1000 events, 9 lost\n"
            "moontrace:   lost 7 from tracepoint:c:d\n"
            "moontrace:   lost 2 from thread names\n");
  EXPECT_EQ(loss_json(counts), R"({"type":"lost_events","data":{"events":1000,"lost":9,)"
                               R"("probes":{"tracepoint:c:d":7,"thread names":2}}})");
}

TEST(LossReport, SaysWhatTheStopLeftUnprocessed) {
  LossCounts counts{50, 20, {0}, {"kprobe:f"}};
  EXPECT_EQ(loss_text(counts),
            "moontrace: 50 events, 0 lost, 20 not processed (the stop gives buffered events "
            "0.5 s)\n");
  EXPECT_EQ(loss_json(counts),
            R"({"type":"lost_events","data":{"events":50,"lost":0,"unprocessed":20,"probes":{}}})");
}

TEST(LossReport, NamesEachProbeWhoseRunsTheKernelSkipped) {
  LossCounts counts{10, 0, {0, 0, 0}, {"kprobe:f", "tracepoint:a:b"}, {3, 0}};
  EXPECT_EQ(loss_text(counts),
            "moontrace: 10 events, 0 lost, 3 probe runs skipped by the kernel (a BPF program "
            "was already running on the CPU)\n"
            "moontrace:   skipped 3 runs of kprobe:f\n");
  EXPECT_EQ(loss_json(counts), R"({"type":"lost_events","data":{"events":10,"lost":0,)"
                               R"("probes":{},"skipped":3,"skipped_probes":{"kprobe:f":3}}})");
}

}  // namespace
}  // namespace mt
