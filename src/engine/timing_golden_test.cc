// The timing statistics and the stopping rule against the golden vectors of
// tests/golden/timing_statistics.json, which the worker's timing/stats.py is held
// to as well (python/tests/test_golden.py).
#include <gtest/gtest.h>

#include "check/testing/golden.h"
#include "engine/timing_statistics.h"

namespace kvault {
namespace {

using testing::GoldenNear;
using testing::GoldenNumber;

std::vector<double> Values(const Json& list) {
  std::vector<double> v;
  for (const Json& x : list) v.push_back(GoldenNumber(x));
  return v;
}

TEST(TimingGoldenTest, StatisticsOfEverySeries) {
  testing::ForEachGolden("timing_statistics.json", "series", 5, [](const Json& g) {
    const std::vector<double> values = Values(g["values"]);
    for (const Json& q : g["quantiles"])
      EXPECT_PRED2(GoldenNear, GoldenNumber(q[1]), Quantile(values, q[0].get<double>())) << "q=" << q[0];
    EXPECT_PRED2(GoldenNear, GoldenNumber(g["median"]), Median(values));
    EXPECT_PRED2(GoldenNear, GoldenNumber(g["iqr"]), InterquartileRange(values));
    EXPECT_PRED2(GoldenNear, GoldenNumber(g["relative_noise"]), RelativeNoise(values));
    const SeriesSummary s = Summarize(values);
    EXPECT_EQ(s.samples, static_cast<int>(values.size()));
    EXPECT_PRED2(GoldenNear, GoldenNumber(g["relative_noise"]), s.noise);
  });
}

TEST(TimingGoldenTest, StoppingRuleOnEveryCase) {
  testing::ForEachGolden("timing_statistics.json", "stopping", 8, [](const Json& g) {
    const Json& r = g["rule"];
    StoppingRule rule;
    rule.min_samples = r["min_samples"];
    rule.max_samples = r["max_samples"];
    rule.min_ms = r["min_ms"];
    rule.max_ms = r["max_ms"];
    rule.noise_target = r["noise_target"];
    std::vector<std::vector<double>> series;
    for (const Json& s : g["series"]) series.push_back(Values(s));
    std::vector<const std::vector<double>*> pointers;
    for (const auto& s : series) pointers.push_back(&s);
    EXPECT_EQ(ToString(rule.Decide(pointers, g["elapsed_ms"].get<double>())), g["stop"].get<std::string>());
  });
}

}  // namespace
}  // namespace kvault
