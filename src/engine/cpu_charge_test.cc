#include "engine/cpu_charge.h"

#include <gtest/gtest.h>

namespace kvault {
namespace {

// A reference whose other threads use 2 ms beyond its calls per sample (the copy's
// pool), 1 ms of it inside its 1 ms call.
CpuSeries Reference() {
  CpuSeries r;
  for (int i = 0; i < 10; ++i) {
    r.reported.push_back(1.0);
    r.others.push_back(3.0 + 0.01 * i);
    r.call_others.push_back(1.0);
    r.cold.push_back(i < 5);
  }
  return r;
}

CpuSeries Candidate(double reported, double others) {
  CpuSeries c;
  for (int i = 0; i < 10; ++i) {
    c.reported.push_back(reported);
    c.others.push_back(others);
    c.cold.push_back(i < 5);
  }
  return c;
}

TEST(CpuChargeTest, HonestSidesAreNotCharged) {
  // Single-threaded: only the overhead's other threads.
  auto single = ChargeOtherThreads(Reference(), Candidate(0.5, 2.0), 2, 0.1, 1, true);
  ASSERT_TRUE(single);
  EXPECT_FALSE(single->applied);
  // Every core busy in the call, the request loop waiting (threads joined in it).
  auto parallel = ChargeOtherThreads(Reference(), Candidate(0.5, 2.0 + 2 * 0.5), 2, 0.1, 1, true);
  ASSERT_TRUE(parallel);
  EXPECT_FALSE(parallel->applied);
  EXPECT_NEAR(parallel->candidate_charged_ms, 0.5, 0.05);
}

TEST(CpuChargeTest, WorkBesideTheRequestIsCharged) {
  // 11 ms of a thread's work (the inputs drawn again and the answer) while the worker
  // draws the inputs; the call itself reports 0.1 ms.
  auto c = ChargeOtherThreads(Reference(), Candidate(0.1, 2.0 + 11.0), 2, 0.1, 1, true);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->applied);
  EXPECT_NEAR(c->candidate_charged_ms, 11.0 / 2 + 1.0 - 1.0, 0.1);
  ASSERT_EQ(c->floors.size(), 10u);
  EXPECT_NEAR(c->floors[0], 5.5, 0.1);
  // Per call of a graph.
  auto graph = ChargeOtherThreads(Reference(), Candidate(0.1 * 4, 2.0 + 11.0), 2, 0.1, 4, true);
  ASSERT_TRUE(graph);
  EXPECT_NEAR(graph->floors[0], 5.5 / 4, 0.05);
}

TEST(CpuChargeTest, NothingToJudge) {
  EXPECT_FALSE(ChargeOtherThreads(Reference(), Candidate(0.1, 50), 1, 0.1, 1, true));  // one core
  EXPECT_FALSE(ChargeOtherThreads(CpuSeries{}, Candidate(0.1, 50), 2, 0.1, 1, true));
  CpuSeries unreported = Reference();
  unreported.call_others.pop_back();
  EXPECT_FALSE(ChargeOtherThreads(unreported, Candidate(0.1, 50), 2, 0.1, 1, true));
}

}  // namespace
}  // namespace kvault
