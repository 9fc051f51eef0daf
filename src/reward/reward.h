#pragma once
// Per-turn rewards for RL training, computed from one verification outcome
// (docs/reward.md). Pure functions: no state, safe from any thread.
//
//   RewardInput in;
//   in.compiled = in.correct = true;
//   in.speedup = 2.0;
//   double r = TurnReward(RewardKind::kPaper, in);          // 1.775
//   double g = DiscountedReturn(std::vector{0.4, 1.4, 2.9});  // 2.284
//
// CONTRACT: only kernel outcomes reach these functions. An attempt that ended in
// task_error or infra_error is not the candidate's fault; the engine records a null
// reward for it (never 0) and never calls TurnReward. A null turn likewise must not
// be passed to DiscountedReturn as 0: the trajectory is incomplete and is retried.
#include <optional>
#include <span>
#include <string_view>

namespace kvault {

enum class RewardKind {
  kPaper,  // "paper": the paper's Triton RL reward, 0 .. 2.9 a turn
  kHipRl,  // "hip-rl": the HIP RL (veRL) reward, 0 .. 10.6
};

std::string_view ToString(RewardKind kind);
// "paper" or "hip-rl"; nullopt for anything else (case-sensitive).
std::optional<RewardKind> RewardKindFromString(std::string_view name);

// The per-status table (docs/reward.md, "What a status earns"): a status that forfeits
// the turn earns 0 under every reward, whatever else the attempt did. policy_violation
// (the work was PyTorch's, not a kernel of the candidate's: under `paper` it would
// earn 0.4 for compiling, more than an honest compile error, so a policy could farm
// it by wrapping PyTorch ops) and parse_error (no code to judge).
bool StatusForfeitsReward(std::string_view status);

struct RewardInput {
  // The outcome's status name (docs/outcomes.md); "" when unknown. Decides with
  // StatusForfeitsReward before anything below.
  std::string_view status;
  bool compiled = false;  // built and loaded (outcome's `compiled`)
  bool correct = false;   // status == passed; counts only when `compiled` is true
  // reference ms / candidate ms. Missing, NaN or infinite: no speed term.
  std::optional<double> speedup;
  // The speedup stayed above the plausibility bound after its re-check in a fresh
  // worker (docs/adversarial.md): it is not believed, so no speed term either.
  bool speedup_implausible = false;
  // HIP RL only: the candidate was judged a near-copy of the baseline kernel.
  bool near_copy_of_baseline = false;
};

// The reward of one turn.
// kPaper: 0 if not compiled; 0.4 if compiled; 1.4 if also correct; plus, when
//   correct with a finite speedup s >= 1, min(0.375 * log2(s)^2, 1.5). Max 2.9.
//   near_copy_of_baseline is ignored.
// kHipRl: 0 unless compiled and correct, and 0 for a near-copy of the baseline;
//   otherwise 0.3 + clip(s, 0, 10) + (0.3 if s > 1.1), with the speed terms
//   dropped when the speedup is missing or not finite.
// Both: a speedup_implausible result gets no speed term (as a missing speedup); a
// status that forfeits the turn (StatusForfeitsReward) earns 0.
double TurnReward(RewardKind kind, const RewardInput& input);

// G = r1 + d*r2 + d^2*r3 + ...; 0 for no turns.
// REQUIRES: 0 <= discount <= 1. Default: 0.6 (the paper's value).
double DiscountedReturn(std::span<const double> per_turn_rewards, double discount = 0.6);

}  // namespace kvault
