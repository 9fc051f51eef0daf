#include "reward/reward.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace kvault {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

RewardInput Input(bool compiled, bool correct, std::optional<double> speedup = std::nullopt) {
  RewardInput in;
  in.compiled = compiled;
  in.correct = correct;
  in.speedup = speedup;
  return in;
}

RewardInput Correct(std::optional<double> speedup) { return Input(true, true, speedup); }

TEST(RewardKind, NamesRoundTrip) {
  EXPECT_EQ(ToString(RewardKind::kPaper), "paper");
  EXPECT_EQ(ToString(RewardKind::kHipRl), "hip-rl");
  EXPECT_EQ(RewardKindFromString("paper"), RewardKind::kPaper);
  EXPECT_EQ(RewardKindFromString("hip-rl"), RewardKind::kHipRl);
  EXPECT_EQ(RewardKindFromString("Paper"), std::nullopt);
  EXPECT_EQ(RewardKindFromString("hip_rl"), std::nullopt);
  EXPECT_EQ(RewardKindFromString(""), std::nullopt);
}

TEST(PaperReward, FailureTiers) {
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, RewardInput{}), 0.0);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, Input(true, false)), 0.4);
  // Mismatch with a speedup: still only the compile term.
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, Input(true, false, 4.0)), 0.4);
  // `correct` counts only when compiled.
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, Input(false, true, 4.0)), 0.0);
}

TEST(PaperReward, SpeedTerm) {
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, Correct(std::nullopt)), 1.4);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, Correct(1.0)), 1.4);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, Correct(std::sqrt(2.0))), 1.4 + 0.09375);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, Correct(2.0)), 1.775);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, Correct(4.0)), 2.9);   // exactly the cap
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, Correct(8.0)), 2.9);   // 3.375 capped
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, Correct(16.0)), 2.9);  // 6.0 capped
  // Slower than the baseline: no speed term (log2(0.5)^2 would be positive).
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, Correct(0.5)), 1.4);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, Correct(kInf)), 1.4);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, Correct(-kInf)), 1.4);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, Correct(kNaN)), 1.4);
}

TEST(PaperReward, IgnoresNearCopy) {
  RewardInput in = Correct(2.0);
  in.near_copy_of_baseline = true;
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, in), 1.775);
}

TEST(HipRlReward, AnyFailureIsZero) {
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, RewardInput{}), 0.0);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, Input(true, false, 2.0)), 0.0);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, Input(false, true, 2.0)), 0.0);
}

TEST(HipRlReward, SpeedTerms) {
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, Correct(std::nullopt)), 0.3);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, Correct(0.5)), 0.8);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, Correct(1.0)), 1.3);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, Correct(1.1)), 1.4);  // bonus needs s > 1.1
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, Correct(2.0)), 2.6);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, Correct(4.0)), 4.6);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, Correct(8.0)), 8.6);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, Correct(16.0)), 10.6);  // clipped to 10
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, Correct(-3.0)), 0.3);   // clipped to 0
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, Correct(kInf)), 0.3);
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, Correct(kNaN)), 0.3);
}

TEST(HipRlReward, NearCopyIsZero) {
  RewardInput in = Correct(4.0);
  in.near_copy_of_baseline = true;
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, in), 0.0);
}

RewardInput Implausible(std::optional<double> speedup) {
  RewardInput in = Correct(speedup);
  in.speedup_implausible = true;
  return in;
}

TEST(Reward, ImplausibleSpeedupHasNoSpeedTerm) {
  // As without a speedup, whatever the speedup.
  for (double s : {400.0, 4.0, 2.0}) {
    EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, Implausible(s)), 1.4) << s;
    EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, Implausible(s)), 0.3) << s;
  }
  // Failures keep their tiers.
  RewardInput failed = Implausible(400.0);
  failed.correct = false;
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, failed), 0.4);
  RewardInput copy = Implausible(4.0);
  copy.near_copy_of_baseline = true;
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kHipRl, copy), 0.0);
}

// A policy_violation compiled (it loaded and ran PyTorch's ops) and a parse_error may
// carry any other field: both earn 0 under every reward, so wrapping PyTorch ops never
// pays more than an honest compile error.
TEST(Reward, StatusesThatForfeitTheTurnEarnNothing) {
  for (const char* status : {"policy_violation", "parse_error"}) {
    RewardInput in = Correct(4.0);
    in.status = status;
    EXPECT_EQ(TurnReward(RewardKind::kPaper, in), 0.0) << status;
    EXPECT_EQ(TurnReward(RewardKind::kHipRl, in), 0.0) << status;
    EXPECT_TRUE(StatusForfeitsReward(status));
  }
  RewardInput mismatch = Input(true, false);
  mismatch.status = "mismatch";
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, mismatch), 0.4);
  RewardInput passed = Correct(4.0);
  passed.status = "passed";
  EXPECT_DOUBLE_EQ(TurnReward(RewardKind::kPaper, passed), 2.9);
  EXPECT_FALSE(StatusForfeitsReward("compile_error"));
  EXPECT_FALSE(StatusForfeitsReward(""));
}

TEST(DiscountedReturn, ThreeTurnExample) {
  // Turn 1 compiles, turn 2 is correct, turn 3 is 4x faster:
  // 0.4 + 0.6 * 1.4 + 0.36 * 2.9 = 2.284.
  const std::vector<double> turns{0.4, 1.4, 2.9};
  EXPECT_DOUBLE_EQ(DiscountedReturn(turns), 2.284);
}

TEST(DiscountedReturn, EdgeCases) {
  EXPECT_DOUBLE_EQ(DiscountedReturn({}), 0.0);
  const std::vector<double> one{1.775};
  EXPECT_DOUBLE_EQ(DiscountedReturn(one), 1.775);
  const std::vector<double> three{1.0, 1.0, 1.0};
  EXPECT_DOUBLE_EQ(DiscountedReturn(three, 1.0), 3.0);
  EXPECT_DOUBLE_EQ(DiscountedReturn(three, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(DiscountedReturn(three, 0.5), 1.75);
}

}  // namespace
}  // namespace kvault
