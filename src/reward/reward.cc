#include "reward/reward.h"

#include <algorithm>
#include <cmath>

namespace kvault {
namespace {

// The paper's constants (Triton RL, paper.json of the release).
constexpr double kPaperCompiled = 0.4;
constexpr double kPaperCorrect = 1.0;
constexpr double kPaperSpeedScale = 0.375;
constexpr double kPaperSpeedCap = 1.5;

// The HIP RL (veRL) constants.
constexpr double kHipCorrect = 0.3;
constexpr double kHipSpeedCap = 10.0;
constexpr double kHipBonusThreshold = 1.1;
constexpr double kHipBonus = 0.3;

// The speedup if present, finite and believed.
std::optional<double> FiniteSpeedup(const RewardInput& in) {
  if (in.speedup && std::isfinite(*in.speedup) && !in.speedup_implausible) return *in.speedup;
  return std::nullopt;
}

double PaperReward(const RewardInput& in) {
  if (!in.compiled) return 0.0;
  double r = kPaperCompiled;
  if (!in.correct) return r;
  r += kPaperCorrect;
  if (auto s = FiniteSpeedup(in); s && *s >= 1.0) {
    const double l = std::log2(*s);
    r += std::min(kPaperSpeedScale * l * l, kPaperSpeedCap);
  }
  return r;
}

double HipRlReward(const RewardInput& in) {
  if (!in.compiled || !in.correct || in.near_copy_of_baseline) return 0.0;
  double r = kHipCorrect;
  if (auto s = FiniteSpeedup(in)) {
    r += std::clamp(*s, 0.0, kHipSpeedCap);
    if (*s > kHipBonusThreshold) r += kHipBonus;
  }
  return r;
}

}  // namespace

std::string_view ToString(RewardKind kind) {
  switch (kind) {
    case RewardKind::kPaper:
      return "paper";
    case RewardKind::kHipRl:
      return "hip-rl";
  }
  return "paper";
}

std::optional<RewardKind> RewardKindFromString(std::string_view name) {
  if (name == "paper") return RewardKind::kPaper;
  if (name == "hip-rl") return RewardKind::kHipRl;
  return std::nullopt;
}

bool StatusForfeitsReward(std::string_view status) {
  static constexpr std::string_view kForfeit[] = {"policy_violation", "parse_error"};
  return std::find(std::begin(kForfeit), std::end(kForfeit), status) != std::end(kForfeit);
}

double TurnReward(RewardKind kind, const RewardInput& input) {
  if (StatusForfeitsReward(input.status)) return 0.0;
  switch (kind) {
    case RewardKind::kPaper:
      return PaperReward(input);
    case RewardKind::kHipRl:
      return HipRlReward(input);
  }
  return 0.0;
}

double DiscountedReturn(std::span<const double> per_turn_rewards, double discount) {
  double g = 0.0;
  double weight = 1.0;
  for (double r : per_turn_rewards) {
    g += weight * r;
    weight *= discount;
  }
  return g;
}

}  // namespace kvault
