#include "engine/speedup_bound.h"

#include <gtest/gtest.h>

namespace kvault {
namespace {

// A timing record as timed_case.cc writes it: the kept medians and, when the engine's
// clock looked, what the candidate's worker reported.
Json TimingRow(double reference_ms, double candidate_ms, std::optional<double> reported_ms) {
  Json row{{"kind", "timing"}, {"reference_ms", reference_ms}, {"candidate_ms", candidate_ms}};
  if (reported_ms) row["engine_clock"] = Json{{"candidate_reported_ms", *reported_ms}, {"applied", true}};
  return row;
}

// The records of a stored `cases` array.
VerificationRecords Records(const Json& cases) { return ReadCases(cases).records; }

TEST(SpeedupBoundTest, ClockFloorsDoNotHideAnImplausibleReport) {
  // slow_sum.implausible on a loaded 2-core host: the worker reported 0.0845 ms, the
  // engine's floors kept 0.642 ms: 4.49x kept, 34x reported, against a bound of 5.
  Verification v;
  v.speedup = 2.881 / 0.642;
  v.records = Records(Json::array({Json{{"kind", "correctness"}}, TimingRow(2.881, 0.642, 0.0845)}));
  ASSERT_TRUE(ReportedSpeedup(v.records));
  EXPECT_NEAR(*ReportedSpeedup(v.records), 2.881 / 0.0845, 1e-9);
  EXPECT_NEAR(SpeedupAgainstBound(v), 2.881 / 0.0845, 1e-9);
  EXPECT_GT(SpeedupAgainstBound(v), 5.0);
}

TEST(SpeedupBoundTest, AReportAboveTheKeptTimeLowersNothing) {
  // A worker that reports more than it took gains no lower judgement: the kept speedup counts.
  Verification v;
  v.speedup = 40.0;
  v.records = Records(Json::array({TimingRow(4.0, 0.1, 2.0)}));
  EXPECT_DOUBLE_EQ(SpeedupAgainstBound(v), 40.0);
}

TEST(SpeedupBoundTest, SumsOverCasesFromTheGivenRecord) {
  Json cases = Json::array({TimingRow(10, 10, 1),    // the first timing: 10x reported
                            Json{{"kind", "recheck"}},
                            TimingRow(3, 2, 1),      // the second timing's two cases
                            TimingRow(5, 2, std::nullopt)});
  EXPECT_NEAR(*ReportedSpeedup(Records(cases), 2), 8.0 / 3.0, 1e-12);  // (3 + 5) / (1 + 2)
  EXPECT_NEAR(*ReportedSpeedup(Records(cases)), 18.0 / 4.0, 1e-12);
  EXPECT_FALSE(ReportedSpeedup(Records(cases), 4));
}

TEST(SpeedupBoundTest, NothingToJudgeWithoutASpeedupOrItsMedians) {
  Verification none;
  none.records = Records(Json::array({TimingRow(10, 1, 0.5)}));
  EXPECT_DOUBLE_EQ(SpeedupAgainstBound(none), 0.0);  // no speedup, no speed term to judge

  Verification v;
  v.speedup = 3.0;
  v.records = Records(Json::array({Json{{"kind", "timing"}, {"reference_ms", 3.0}}, TimingRow(10, 1, 0.1)}));
  EXPECT_FALSE(ReportedSpeedup(v.records));  // a record without a candidate median
  EXPECT_DOUBLE_EQ(SpeedupAgainstBound(v), 3.0);
  v.records = Records(Json::array({TimingRow(3, 1, 0.0)}));  // a zero report: infinite, not a number to judge
  EXPECT_FALSE(ReportedSpeedup(v.records));
  EXPECT_DOUBLE_EQ(SpeedupAgainstBound(v), 3.0);
  EXPECT_FALSE(ReportedSpeedup(Records(Json::object())));
}

}  // namespace
}  // namespace kvault
