// The timer's statistics and stopping rule on synthetic samples.
#include "engine/timing_statistics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kvault {
namespace {

TEST(TimingStatisticsTest, QuantilesInterpolateLinearly) {
  EXPECT_DOUBLE_EQ(Median({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(Median({1, 2, 3, 10}), 2.5);
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4, 5}, 0.25), 2);
  EXPECT_DOUBLE_EQ(Quantile({7}, 0.75), 7);
  EXPECT_DOUBLE_EQ(InterquartileRange({1, 2, 3, 4, 5}), 2);
}

TEST(TimingStatisticsTest, RelativeNoiseIsTheStandardErrorOfTheMedian) {
  const double expected = std::sqrt(M_PI / 2) * (2.0 / 1.349) / std::sqrt(5.0) / 10.0;
  EXPECT_NEAR(RelativeNoise({12, 8, 10, 11, 9}), expected, 1e-12);
  EXPECT_TRUE(std::isinf(RelativeNoise({1})));
  EXPECT_TRUE(std::isinf(RelativeNoise({0, 0})));
  EXPECT_EQ(RelativeNoise({2, 2, 2}), 0);
  SeriesSummary s = Summarize({12, 8, 10, 11, 9});
  EXPECT_EQ(s.samples, 5);
  EXPECT_DOUBLE_EQ(s.median_ms, 10);
  EXPECT_DOUBLE_EQ(s.iqr_ms, 2);
}

TEST(TimingStatisticsTest, StoppingRule) {
  StoppingRule rule;
  rule.min_samples = 4;
  rule.max_samples = 50;
  rule.min_ms = 10;
  rule.max_ms = 100;
  rule.noise_target = 0.01;
  std::vector<double> steady(4, 1.0), short_steady(3, 1.0), noisy{1, 2, 3, 4};
  std::vector<double> many(52, 1.0);
  EXPECT_EQ(rule.Decide({&steady, &short_steady}, 50), StopReason::kContinue);
  EXPECT_EQ(rule.Decide({&steady, &steady}, 5), StopReason::kContinue);
  EXPECT_EQ(rule.Decide({&steady, &steady}, 10), StopReason::kSettled);
  EXPECT_EQ(rule.Decide({&steady, &noisy}, 50), StopReason::kContinue);
  EXPECT_EQ(rule.Decide({&steady, &noisy}, 100), StopReason::kWallCap);
  EXPECT_EQ(rule.Decide({&many, &noisy}, 50), StopReason::kMaxSamples);
  EXPECT_EQ(rule.Decide({&short_steady, &noisy}, 1e9), StopReason::kContinue);
  EXPECT_EQ(ToString(StopReason::kWallCap), "wall_cap");
}

TEST(TimingStatisticsTest, RuleFromSettingsKeepsBoundsConsistent) {
  TimingSettings s;
  s.min_samples = 0;
  s.max_samples = -3;
  StoppingRule r = StoppingRule::From(s);
  EXPECT_EQ(r.min_samples, 1);
  EXPECT_EQ(r.max_samples, 1);
  EXPECT_DOUBLE_EQ(StoppingRule::From(TimingSettings{}).noise_target, 0.005);
}

}  // namespace
}  // namespace kvault
