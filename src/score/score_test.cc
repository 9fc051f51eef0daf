// Scores from fixtures, checked against values computed by hand (docs/scoring.md).
#include <gtest/gtest.h>

#include <cmath>

#include "score/compare.h"
#include "score/metrics.h"
#include "score/pass_at_k.h"
#include "score/samples.h"
#include "score/score_json.h"
#include "score/significance.h"

namespace kvault::score {
namespace {

AttemptRecord Rec(int64_t id, const std::string& task, const std::string& status,
                  std::optional<double> speedup = std::nullopt, double ref_ms = 0) {
  AttemptRecord r;
  r.id = id;
  r.run = "r";
  r.task = task;
  r.status = status;
  r.correct = status == "passed";
  r.compiled = status != "compile_error" && status != "parse_error";
  r.speedup = speedup;
  if (speedup && ref_ms > 0) {
    r.reference_ms = ref_ms;
    r.candidate_ms = ref_ms / *speedup;
  }
  return r;
}

TEST(PassAtK, HandComputedAndEdgeCases) {
  EXPECT_NEAR(PassAtK(5, 2, 3), 0.9, 1e-12);       // 1 - C(3,3)/C(5,3) = 1 - 1/10
  EXPECT_NEAR(PassAtK(5, 2, 1), 0.4, 1e-12);       // c/n
  EXPECT_NEAR(PassAtK(10, 3, 2), 1 - 21.0 / 45, 1e-12);  // 1 - C(7,2)/C(10,2)
  EXPECT_EQ(PassAtK(5, 0, 1), 0.0);                 // c = 0
  EXPECT_EQ(PassAtK(5, 0, 5), 0.0);
  EXPECT_EQ(PassAtK(4, 4, 1), 1.0);                 // c = n
  EXPECT_EQ(PassAtK(4, 4, 4), 1.0);
  EXPECT_EQ(PassAtK(5, 3, 3), 1.0);                 // n - c < k
  EXPECT_EQ(PassAtK(2, 1, 3), 1.0);                 // n < k, c > 0
  EXPECT_EQ(PassAtK(2, 0, 3), 0.0);                 // n < k, c = 0
  EXPECT_EQ(PassAtK(0, 0, 1), 0.0);                 // unattempted
  EXPECT_NEAR(PassAtK(200, 1, 1), 0.005, 1e-12);    // large n stays exact
  EXPECT_NEAR(PassAtK(1000, 10, 100), 1 - std::exp(std::lgamma(991) - std::lgamma(891) - std::lgamma(1001) + std::lgamma(901)), 1e-9);
}

TEST(Samples, CategoriesAndExclusion) {
  auto cats = ParseCategories(R"({"b": "fusion"})");
  ASSERT_TRUE(cats);
  EXPECT_EQ(CategoryOf("b", *cats), "fusion");
  EXPECT_EQ(CategoryOf("level1/relu", *cats), "level1");
  EXPECT_EQ(CategoryOf("relu", *cats), "all");
  EXPECT_FALSE(ParseCategories("[1]"));
  EXPECT_FALSE(ParseCategories(R"({"a": 3})"));
  std::vector<AttemptRecord> recs = {Rec(3, "a", "passed"), Rec(1, "a", "mismatch"),
                                     Rec(2, "a", "infra_error"), Rec(4, "x", "task_error"),
                                     Rec(5, "zzz", "passed"), Rec(6, "a", "unsupported"),
                                     Rec(7, "h", "unsupported")};
  SuiteSamples s = GroupByTask(recs, {"a", "x", "y", "h"}, {});
  ASSERT_EQ(s.tasks.size(), 4u);
  ASSERT_EQ(s.tasks[0].samples.size(), 2u);
  EXPECT_EQ(s.tasks[0].samples[0].id, 1);  // store order
  EXPECT_EQ(s.tasks[0].not_kernel_fault, 2u);
  EXPECT_TRUE(s.tasks[1].excluded());
  EXPECT_FALSE(s.tasks[2].attempted());
  // A HIP run scored on a machine without a GPU backend: no sample, not a failure.
  EXPECT_TRUE(s.tasks[3].excluded());
  EXPECT_EQ(s.unknown_tasks, std::vector<std::string>{"zzz"});
  EXPECT_EQ(s.statuses["infra_error"], 1u);
}

// An answer whose content the backend cannot build is its own failed sample (a
// compile_error now; `unsupported` in a store made while a KernelBench file's text
// decided it): it never leaves pass@k. A suite this backend cannot run at all (a .hip
// extension on cpu) is no sample and its task is excluded, as before.
TEST(Samples, AnAnswerInAnotherLanguageIsAFailedSampleASuiteInOneIsExcluded) {
  AttemptRecord foreign = Rec(2, "kb", "compile_error");
  foreign.format = "kernelbench";
  AttemptRecord legacy = Rec(3, "kb", "unsupported");  // `# __global__` in a wrong answer
  legacy.format = "kernelbench";
  AttemptRecord hip = Rec(4, "h", "unsupported");
  hip.format = "extension";
  hip.language = "hip";
  SuiteSamples s = GroupByTask({Rec(1, "kb", "passed"), foreign, legacy, hip}, {"kb", "h"}, {});
  ASSERT_EQ(s.tasks[0].samples.size(), 3u);
  EXPECT_EQ(s.tasks[0].not_kernel_fault, 0u);
  EXPECT_TRUE(s.tasks[1].excluded());
  RunScore score = ScoreSuite(s, ScoreOptions{});
  EXPECT_EQ(score.scored, 1u);
  EXPECT_EQ(score.excluded, std::vector<std::string>{"h"});
  EXPECT_NEAR(*score.pass_at_k.at(1).value, 1.0 / 3, 1e-12);  // 1 of 3, not 1 of 1
}

// Samples are ordered by their names, numbers as numbers, not by when they were
// recorded (parallel lanes finish out of order) nor alphabetically; so is Comp@k.
TEST(Samples, OrderedBySampleNameNumerically) {
  std::vector<AttemptRecord> recs = {Rec(1, "a", "passed"), Rec(2, "a", "mismatch"),
                                     Rec(3, "a", "compile_error")};
  recs[0].sample = "level_1_problem_1_sample_10_kernel.py";
  recs[1].sample = "level_1_problem_1_sample_2_kernel.py";
  recs[2].sample = "level_1_problem_1_sample_0_kernel.py";
  SuiteSamples s = GroupByTask(recs, {"a"}, {});
  ASSERT_EQ(s.tasks[0].samples.size(), 3u);
  EXPECT_EQ(s.tasks[0].samples[0].id, 3);
  EXPECT_EQ(s.tasks[0].samples[1].id, 2);
  EXPECT_EQ(s.tasks[0].samples[2].id, 1);
}

// kvault serve names tasks `<label>-<hash12>`; a campaign's records score as the
// suite's tasks, matched by content first, then by label.
AttemptRecord ServeRec(int64_t id, const std::string& label, const std::string& hash, const std::string& status) {
  AttemptRecord r = Rec(id, label + "-" + hash.substr(0, 12), status);
  r.task_hash = hash;
  return r;
}

TEST(Samples, ServeNamesScoreAsSuiteTasks) {
  const std::string relu(64, 'a'), relu_tol(64, 'b'), gelu(64, 'c'), conv(64, 'd');
  std::vector<AttemptRecord> recs = {ServeRec(1, "relu", relu, "passed"), ServeRec(2, "relu", relu_tol, "mismatch"),
                                     ServeRec(3, "19_ReLU", gelu, "passed"), ServeRec(4, "other", conv, "passed"),
                                     Rec(5, "plain-aaaaaaaaaaaa", "passed")};  // no task_hash: not serve's
  NameServeTasks(recs, {{"relu", relu}, {"level1/19_ReLU", std::string(64, 'e')}});
  EXPECT_EQ(recs[0].task, "relu");            // by content
  EXPECT_EQ(recs[1].task, "relu");            // by label: other request tolerances
  EXPECT_EQ(recs[2].task, "level1/19_ReLU");  // label = the suite name's last part
  EXPECT_EQ(recs[3].task, "other-dddddddddddd");  // no such task: left as it was
  EXPECT_EQ(recs[4].task, "plain-aaaaaaaaaaaa");
  SuiteSamples s = GroupByTask(recs, {"relu", "level1/19_ReLU"}, {});
  EXPECT_EQ(s.tasks[0].samples.size(), 2u);
  EXPECT_EQ(s.tasks[1].samples.size(), 1u);
}

TEST(Samples, ServeNamesWithoutSuiteNeverMergeContents) {
  const std::string a(64, 'a'), b(64, 'b'), c(64, 'c');
  std::vector<AttemptRecord> recs = {ServeRec(1, "relu", a, "passed"), ServeRec(2, "relu", a, "mismatch"),
                                     ServeRec(3, "task", b, "passed"), ServeRec(4, "task", c, "passed")};
  NameServeTasks(recs, {});
  EXPECT_EQ(recs[0].task, "relu");
  EXPECT_EQ(recs[1].task, "relu");
  EXPECT_EQ(recs[2].task, "task-bbbbbbbbbbbb");  // two contents share the label "task"
  EXPECT_EQ(recs[3].task, "task-cccccccccccc");
  EXPECT_EQ(TasksOf(recs), (std::vector<std::string>{"relu", "task-bbbbbbbbbbbb", "task-cccccccccccc"}));
}

// Suite of 5 tasks, by hand:
//   a: mismatch, passed 2x, passed 4x        n=3 c=2
//   b: compile_error, mismatch               n=2 c=0 (ran)
//   c: passed 0.5x                            n=1 c=1
//   d: infra_error only                       excluded
//   e: no attempt                             unattempted, scored as failure
SuiteSamples Fixture() {
  std::vector<AttemptRecord> recs = {
      Rec(1, "a", "mismatch"), Rec(2, "a", "passed", 2.0, 10), Rec(3, "a", "passed", 4.0, 10),
      Rec(4, "b", "compile_error"), Rec(5, "b", "mismatch"), Rec(6, "c", "passed", 0.5, 1),
      Rec(7, "d", "infra_error")};
  return GroupByTask(recs, {"a", "b", "c", "d", "e"}, {{"c", "other"}});
}

TEST(ScoreSuite, HandComputedFixture) {
  ScoreOptions o;
  o.ks = {1, 2, 3};
  RunScore s = ScoreSuite(Fixture(), o);
  EXPECT_EQ(s.tasks, 5u);
  EXPECT_EQ(s.scored, 4u);
  EXPECT_EQ(s.excluded, std::vector<std::string>{"d"});
  EXPECT_EQ(s.unattempted, 1u);
  EXPECT_EQ(s.solved, 2u);
  // Fewer samples than k = 3: b (2) and c (1). e has none: unattempted, a failure, not short.
  EXPECT_EQ(s.short_tasks, 2u);
  // pass@1 = (2/3 + 0 + 1 + 0) / 4; pass@2 = (1 + 0 + 1 + 0) / 4 (a: n-c=1<2; c: n<k)
  EXPECT_NEAR(*s.pass_at_k[1].value, (2.0 / 3 + 1) / 4, 1e-12);
  EXPECT_NEAR(*s.pass_at_k[2].value, 0.5, 1e-12);
  EXPECT_NEAR(*s.pass_at_k[3].value, 0.5, 1e-12);
  // Comp@1: a's first ran (mismatch), b's first did not, c ran -> 2/4; Comp@2: b ran too.
  EXPECT_NEAR(*s.comp_at_k[1].value, 0.5, 1e-12);
  EXPECT_NEAR(*s.comp_at_k[2].value, 0.75, 1e-12);
  // Corr@1: only c -> 1/4; Corr@2: a and c -> 2/4.
  EXPECT_NEAR(*s.corr_at_k[1].value, 0.25, 1e-12);
  EXPECT_NEAR(*s.corr_at_k[2].value, 0.5, 1e-12);
  // Speedups: attempts 2, 4, 0.5 -> (2*4*0.5)^(1/3) = 4^(1/3); best a=4, c=0.5 -> sqrt(2).
  EXPECT_NEAR(*s.geomean_speedup.value, std::cbrt(4.0), 1e-12);
  EXPECT_NEAR(*s.geomean_best.value, std::sqrt(2.0), 1e-12);
  // Σref/Σcand: a = 20 / (5 + 2.5) = 8/3, c = 0.5 -> sqrt(4/3).
  EXPECT_NEAR(*s.per_task[0].sum_ratio, 8.0 / 3, 1e-12);
  EXPECT_NEAR(*s.geomean_ratio.value, std::sqrt(4.0 / 3), 1e-12);
  // fast_p over 4 scored tasks: solved a (4x), c (0.5x).
  EXPECT_NEAR(*s.fast_p[0].value, 0.5, 1e-12);
  EXPECT_NEAR(*s.fast_p[0.5].value, 0.25, 1e-12);  // 0.5 is not > 0.5
  EXPECT_NEAR(*s.fast_p[1].value, 0.25, 1e-12);
  EXPECT_NEAR(*s.fast_p[2].value, 0.25, 1e-12);
  // Categories: "all" = a, b, d, e; "other" = c.
  ASSERT_EQ(s.categories.size(), 2u);
  EXPECT_EQ(s.categories[0].label, "all");
  EXPECT_EQ(s.categories[0].scored, 3u);
  EXPECT_NEAR(*s.categories[0].pass_at_k[1].value, 2.0 / 9, 1e-12);
  EXPECT_EQ(s.categories[1].label, "other");
  EXPECT_NEAR(*s.categories[1].pass_at_k[1].value, 1.0, 1e-12);
}

TEST(ScoreSuite, NoSolvedTaskLeavesSpeedupsAbsent) {
  auto s = ScoreSuite(GroupByTask({Rec(1, "a", "mismatch")}, {"a"}, {}), ScoreOptions{});
  EXPECT_FALSE(s.geomean_speedup.value);
  EXPECT_FALSE(s.geomean_best.value);
  EXPECT_EQ(*s.pass_at_k[1].value, 0.0);
}

TEST(Bootstrap, DeterministicAndContainsPoint) {
  TaskTerms t;
  for (int i = 0; i < 40; ++i) t.Add(i % 3 == 0 ? 1 : 0, 1);
  BootstrapOptions o;
  Estimate a = BootstrapEstimate(t, o), b = BootstrapEstimate(t, o);
  ASSERT_TRUE(a.lo && a.hi);
  EXPECT_EQ(*a.lo, *b.lo);
  EXPECT_EQ(*a.hi, *b.hi);
  EXPECT_LE(*a.lo, *a.value);
  EXPECT_GE(*a.hi, *a.value);
  EXPECT_LT(*a.lo, *a.hi);
  o.seed = 7;
  Estimate c = BootstrapEstimate(t, o);
  EXPECT_LE(*c.lo, *c.value);
  EXPECT_GE(*c.hi, *c.value);
  o.resamples = 0;
  EXPECT_FALSE(BootstrapEstimate(t, o).lo);
  RunScore s = ScoreSuite(Fixture(), ScoreOptions{});
  for (const auto& [p, e] : s.fast_p) EXPECT_TRUE(*e.lo <= *e.value && *e.value <= *e.hi) << p;
}

TEST(Quantile, Interpolates) {
  EXPECT_EQ(Quantile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_EQ(Quantile({5}, 0.9), 5);
}

TEST(Significance, SignTestByHand) {
  EXPECT_NEAR(SignTestP(5, 0), 2.0 / 32, 1e-12);
  EXPECT_NEAR(SignTestP(6, 1), 2.0 * 8 / 128, 1e-12);
  EXPECT_EQ(SignTestP(0, 0), 1.0);
  EXPECT_EQ(SignTestP(3, 3), 1.0);
}

TEST(Significance, SignedRankByHand) {
  // Ranks 1..5, W+ = 1+3+4+5 = 13, W- = 2; P(W- <= 2) = |{}, {1}, {2}| / 32.
  SignedRank r = SignedRankTest({1, -2, 3, 4, 5, 0});
  EXPECT_EQ(r.n, 5u);
  EXPECT_EQ(r.w_plus, 13);
  EXPECT_EQ(r.w_minus, 2);
  EXPECT_NEAR(r.p, 6.0 / 32, 1e-12);
  // Ties: |d| = 1, 1, 2 -> ranks 1.5, 1.5, 3.
  SignedRank t = SignedRankTest({1, -1, 2});
  EXPECT_EQ(t.w_plus, 4.5);
  EXPECT_EQ(t.w_minus, 1.5);
  std::vector<double> many;
  for (int i = 1; i <= 60; ++i) many.push_back(i % 4 == 0 ? -i : i);
  SignedRank big = SignedRankTest(many);
  EXPECT_FALSE(big.exact);
  EXPECT_LT(big.p, 0.01);
}

TEST(Compare, PairedByHand) {
  ScoreOptions o;
  std::vector<AttemptRecord> a = {Rec(1, "t1", "passed", 2.0), Rec(2, "t2", "passed", 3.0),
                                  Rec(3, "t3", "passed", 1.0), Rec(4, "t4", "mismatch")};
  std::vector<AttemptRecord> b = {Rec(1, "t1", "passed", 1.0), Rec(2, "t2", "mismatch"),
                                  Rec(3, "t3", "mismatch"), Rec(4, "t4", "mismatch"),
                                  Rec(5, "t5", "passed", 1.0)};
  std::vector<std::string> tasks = {"t1", "t2", "t3", "t4"};
  Comparison c = CompareRuns(ScoreSuite(GroupByTask(a, tasks, {}), o),
                             ScoreSuite(GroupByTask(b, {"t1", "t2", "t3", "t4", "t5"}, {}), o), o.bootstrap);
  EXPECT_EQ(c.common, 4u);
  EXPECT_EQ(c.only_b, 1u);
  EXPECT_EQ(c.a_only_solved, 2u);
  EXPECT_EQ(c.b_only_solved, 0u);
  EXPECT_NEAR(c.solved_p, 0.5, 1e-12);  // 2 * C(2,0) / 4
  EXPECT_NEAR(*c.pass1_diff.value, 0.5, 1e-12);
  EXPECT_EQ(c.speed_test.n, 1u);
  EXPECT_NEAR(*c.speed_ratio.value, 2.0, 1e-12);
  Json j = CompareJson("A", "B", c);
  EXPECT_EQ(j["differing_tasks"].size(), 2u);
}

TEST(ScoreJson, KeysAndNulls) {
  ScoreOptions o;
  o.ks = {1, 3};
  Json j = ScoreJson(ScoreSuite(Fixture(), o), true);
  EXPECT_TRUE(j["pass_at_k"].contains("1"));
  EXPECT_TRUE(j["pass_at_k"].contains("3"));
  EXPECT_TRUE(j["fast_p"].contains("0.5"));
  EXPECT_TRUE(j["fast_p"].contains("1.5"));
  EXPECT_TRUE(j["ci"]["pass_at_k"]["1"].is_array());
  EXPECT_EQ(j["per_task"].size(), 5u);
  EXPECT_EQ(KeyText(0.8), "0.8");
  EXPECT_EQ(KeyText(2), "2");
}

}  // namespace
}  // namespace kvault::score
