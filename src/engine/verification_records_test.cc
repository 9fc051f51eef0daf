// The typed records of a verification against tests/golden/verification_cases.json:
// the `cases` arrays the store and `--json` output held before the records were typed.
#include "engine/verification_records.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "check/testing/golden.h"

namespace kvault {
namespace {

Json Golden(const char* key) {
  const Json cases = testing::LoadGolden("verification_cases.json").value(key, Json::array());
  EXPECT_GE(cases.size(), 6u) << key;
  return cases;
}

// Read back and written again, a stored array is the same JSON, record by record.
void ExpectRoundTrip(const Json& cases) {
  const StoredCases stored = ReadCases(cases);
  const Json again = CasesJson(stored.records, stored.phases);
  ASSERT_EQ(again.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(again[i], cases[i]) << "record " << i;
  // And the typed records survive their own JSON.
  const StoredCases twice = ReadCases(again);
  EXPECT_EQ(twice.records, stored.records);
  EXPECT_EQ(twice.phases, stored.phases);
}

TEST(VerificationRecords, GoldenCasesOfAPassRoundTripUnchanged) {
  ExpectRoundTrip(Golden("passed"));
}

TEST(VerificationRecords, GoldenCasesOfFailuresRoundTripUnchanged) {
  ExpectRoundTrip(Golden("failed"));
}

// A stage run again with the device's memory to itself says so; one run again with
// the device alone (the older record) does not.
TEST(VerificationRecords, ARunWithTheDevicesMemoryToItselfSaysSo) {
  const Json cases = Json::array({
      Json{{"kind", "alone_after_oom"}, {"where", "case default seed 1"}, {"first", "CUDA out of memory"}},
      Json{{"kind", "alone_after_oom"}, {"where", "case default seed 1"}, {"first", "CUDA out of memory"},
           {"whole_memory", true}}});
  ExpectRoundTrip(cases);
  const StoredCases stored = ReadCases(cases);
  ASSERT_EQ(stored.records.size(), 2u);
  EXPECT_FALSE(std::get<AloneAfterOomRecord>(stored.records[0]).whole_memory);
  EXPECT_TRUE(std::get<AloneAfterOomRecord>(stored.records[1]).whole_memory);
}

TEST(VerificationRecords, GoldenRecordsReadAsTheirTypes) {
  const StoredCases stored = ReadCases(Golden("passed"));
  ASSERT_EQ(stored.records.size(), 10u);
  const auto* run = std::get_if<CorrectnessRecord>(&stored.records[2]);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->case_name, "big");
  EXPECT_EQ(run->distribution, "signed");
  ASSERT_TRUE(run->comparison);
  EXPECT_EQ(run->comparison->compared_on, "device");
  EXPECT_EQ(run->comparison->compared, 4096);
  EXPECT_EQ(std::get<AloneAfterOomRecord>(stored.records[3]).where, "timing preparation");

  const std::vector<const TimingRecord*> timings = Timings(stored.records);
  ASSERT_EQ(timings.size(), 5u);
  const TimingRecord& big = *timings[0];
  EXPECT_EQ(big.case_name, "big");
  EXPECT_EQ(big.method, "monotonic_clock");
  EXPECT_TRUE(big.flushed);
  ASSERT_TRUE(big.reference.primary && big.candidate.primary);
  EXPECT_EQ(big.reference.primary->samples, 10);
  ASSERT_TRUE(big.engine_clock && big.engine_clock->bursts);
  EXPECT_TRUE(big.engine_clock->blind);
  EXPECT_TRUE(big.engine_clock->bursts->applied);
  EXPECT_EQ(big.sensors_after.value("sm_mhz", 0), 1980);
  EXPECT_TRUE(big.stage_ms.finish);
  EXPECT_EQ(timings[1]->graph_calls, 50);
  EXPECT_EQ(timings[2]->graph_fallback, "no");
  EXPECT_FALSE(timings[3]->flushed);
  EXPECT_EQ(timings[3]->recheck, "skipped");
  EXPECT_EQ(timings[4]->samples_on, "device");
  EXPECT_EQ(Timings(stored.records, 5).size(), 4u);  // from an index on

  const RecheckRecord* recheck = FindRecheck(stored.records);
  ASSERT_NE(recheck, nullptr);
  EXPECT_TRUE(recheck->still_implausible);
  EXPECT_EQ(recheck->speedup_after, 380.5);
  EXPECT_EQ(recheck->judged_before, 400.0);
  ASSERT_TRUE(stored.phases);
  EXPECT_EQ(stored.phases->Seconds(Phase::kRecheck), 1.1);
  EXPECT_EQ(stored.phases->Seconds(Phase::kTimingWait), 0.0);
}

// Records made in code are written as the engine always wrote them.
TEST(VerificationRecords, RecordsMadeInCodeMatchTheGolden) {
  const Json golden = Golden("failed");
  CorrectnessRecord mismatch{"default", 1, "task", CorrectnessRecord::Status::kMismatch, {}};
  mismatch.comparison = CorrectnessRecord::Comparison{
      "first",
      0.5,
      0.5,
      12,
      1024,
      "",
      "output: 12 of 1024 elements differ beyond rtol=0.0001 atol=0.0001; worst at [3, 7]: got 1.5, "
      "expected 1.0 (abs err 0.5, rel err 0.5)",
      "output",
      {3, 7}};
  EXPECT_EQ(RecordJson(mismatch), golden[0]);
  EXPECT_EQ(
      RecordJson(CorrectnessRecord{"default", 2, "task", CorrectnessRecord::Status::kInputsModified, {}}),
      golden[1]);
  RecheckRecord failed;
  failed.bound = 50, failed.speedup_before = 400, failed.failed = "in a fresh worker";
  EXPECT_EQ(RecordJson(failed), golden[3]);
  RecheckRecord plausible;
  plausible.bound = 5, plausible.speedup_before = 6;  // measured again: no speedup
  EXPECT_EQ(RecordJson(plausible), golden[4]);
  EXPECT_EQ(CasesJson({}, Phases{}), Json::array({golden[5]}));  // phases set, none reached
  EXPECT_EQ(CasesJson({}, std::nullopt), Json::array());         // an outcome before any stage
}

// A spread of samples whose noise is not a number is stored as null and read as NaN.
TEST(VerificationRecords, NoiseThatIsNotANumberIsNull) {
  Json timing = Golden("passed")[4];
  ASSERT_EQ(timing.value("kind", ""), "timing");
  timing["reference_noise"] = nullptr;
  const StoredCases stored = ReadCases(Json::array({timing}));
  ASSERT_EQ(stored.records.size(), 1u);
  const TimingRecord& t = std::get<TimingRecord>(stored.records[0]);
  ASSERT_TRUE(t.reference.primary);
  EXPECT_TRUE(std::isnan(t.reference.primary->noise));
  EXPECT_EQ(RecordJson(t), timing);
}

TEST(VerificationRecords, WhatCannotBeReadIsSkipped) {
  const Json cases = Json::array({
      Json("not an object"),
      Json{{"case", "c"}, {"status", "exploded"}},  // no such status
      Json{{"case", "c"}},                          // no status at all
      Json{{"kind", "from_the_future"}, {"x", 1}},  // no such kind
      Json{{"kind", "phases"}},                     // no seconds
      Json{{"kind", "timing"}, {"case", 7}, {"speedup", "fast"}, {"stage_ms", "no"}},
      Json{{"case", "c"}, {"seed", "one"}, {"status", "ok"}, {"max_abs_error", "big"}},
  });
  const StoredCases stored = ReadCases(cases);
  EXPECT_FALSE(stored.phases);  // a record of before phases were kept
  ASSERT_EQ(stored.records.size(), 2u);
  const TimingRecord& t = std::get<TimingRecord>(stored.records[0]);
  EXPECT_EQ(t.case_name, "");
  EXPECT_FALSE(t.speedup);
  const CorrectnessRecord& c = std::get<CorrectnessRecord>(stored.records[1]);
  EXPECT_EQ(c.seed, 0);
  ASSERT_TRUE(c.comparison);
  EXPECT_EQ(c.comparison->max_abs_error, 0.0);
  EXPECT_TRUE(ReadCases(Json("not an array")).records.empty());
}

TEST(VerificationRecords, PhasesHaveOneNameEachAndSkipOthers) {
  std::set<std::string_view> names;
  for (Phase p : kPhases) {
    names.insert(ToString(p));
    EXPECT_EQ(PhaseFromString(ToString(p)), p);
  }
  EXPECT_EQ(names.size(), kPhases.size());
  EXPECT_FALSE(PhaseFromString("lunch"));
  const Phases phases = Phases::FromJson(Json{{"timing", "fast"}, {"lunch", 1.0}, {"load", 0.25}});
  EXPECT_EQ(phases.ToJson(), (Json{{"load", 0.25}}));
  Phases added;
  EXPECT_TRUE(added.empty());
  added.Add(Phase::kBuild, 1.0);
  added.Add(Phase::kBuild, 0.5);
  EXPECT_EQ(added.Seconds(Phase::kBuild), 1.5);
  EXPECT_FALSE(added.Seconds(Phase::kLoad));
  EXPECT_TRUE(IsDevicePhase(Phase::kTiming));
  EXPECT_FALSE(IsDevicePhase(Phase::kGateWait));
}

}  // namespace
}  // namespace kvault
