// Timing one case across a scripted reference worker and candidate worker.
#include "engine/timed_case.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "check/testing/golden.h"
#include "engine/gpu_sensors.h"
#include "engine/testing/fake_timing.h"
#include "util/files.h"
#include "worker/protocol.h"

namespace kvault {
namespace {

using testing::FakeTiming;

class TimedCaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create();
    ASSERT_TRUE(dir);
    dir_ = std::make_unique<TempDir>(std::move(*dir));
    options_.cache_dir = dir_->path();
    options_.timing.min_samples = 10;
    options_.timing.max_samples = 100;
    options_.timing.min_ms = 0;
    options_.timing.batch = 5;
    // The fakes answer at once whatever they report: the engine's clock would overrule
    // the reports it sees as too short. The tests of that bound use fakes that take the
    // time they report (and the default slack).
    options_.timing.clock_slack = 1e9;
    task_.file = TaskFile{"relu", dir_->path() + "/relu.py", "source", "taskhash"};
    task_.cases.push_back(CaseInfo{"big", true, true});
  }

  // A session whose reference and candidate workers are scripted by `fake`.
  std::unique_ptr<DeviceSession> Session(std::shared_ptr<FakeTiming> fake) {
    return std::make_unique<DeviceSession>(
        options_, std::string(ToString(options_.backend)),
        [this, fake](const WorkerOptions&) -> Result<std::unique_ptr<WorkerConnection>> {
          if (refuse_starts_) return Error{"cannot start worker (python3): Resource temporarily unavailable"};
          auto w = std::make_unique<FakeWorker>();
          w->Handle("hello", [](const Json&) {
            return FakeWorker::Ok(Json{{"protocol", protocol::kVersion}, {"device", Json::object()}});
          });
          testing::ScriptTiming(*w, fake);
          return std::unique_ptr<WorkerConnection>(std::move(w));
        });
  }

  TimedCase Run() {
    auto owned = Session(fake_);
    DeviceSession& session = *owned;
    TimedCaseRequest req{task_, 0, 1000, options_, dir_->path(), {}};
    req.outputs_on_device = outputs_on_device_;
    req.turn.alone = [this]() -> Result<TurnStart> {
      fake_->log.push_back("gate:alone");
      return TurnStart{};
    };
    req.turn.share = [this] { fake_->log.push_back("gate:share"); };
    req.turn.done = [this] { fake_->log.push_back("gate:done"); };
    PreparedCase prepared = PrepareCase(session, req);
    if (prepared.failure) {
      TimedCase failed;
      failed.failure = std::move(prepared.failure);
      return failed;
    }
    return TimeCase(session, req, std::move(prepared));
  }

  std::unique_ptr<TempDir> dir_;
  EngineOptions options_;
  TaskInfo task_;
  std::shared_ptr<FakeTiming> fake_ = std::make_shared<FakeTiming>();
  bool outputs_on_device_ = false;
  bool refuse_starts_ = false;  // no worker starts (the process table full, the sandbox broken)
};

// What a timing holds on the device, by its inputs: 9 bytes a byte on both sides, a
// round's outputs where they are kept on the device and fit, a graph where one may be
// captured (bounded, and none for inputs whose sets would not fit).
TEST(TimingFootprintTest, CountsBothSidesKeptOutputsAndGraphs) {
  EngineOptions options;
  options.backend = Backend::kCuda;
  options.timing.graph = GraphMode::kNever;
  const int64_t gb = int64_t{1} << 30, mb = int64_t{1} << 20;
  EXPECT_EQ(TimingFootprintBytes(4 * gb, options, /*outputs_on_device=*/true), 36 * gb);  // 10 outputs: not kept
  EXPECT_EQ(TimingFootprintBytes(100 * mb, options, false), 900 * mb);
  EXPECT_EQ(TimingFootprintBytes(100 * mb, options, true), 900 * mb + 2 * 10 * 100 * mb);  // a round kept a side
  options.timing.graph = GraphMode::kAuto;
  EXPECT_EQ(TimingFootprintBytes(100 * mb, options, false), 900 * mb + 2 * 2 * gb);  // sets and outputs, each 1 GiB
  EXPECT_EQ(TimingFootprintBytes(1 * mb, options, false), 9 * mb + 2 * (1004 + 1000) * mb);
  EXPECT_EQ(TimingFootprintBytes(300 * mb, options, false), 2700 * mb);  // five sets pass 1 GiB: no graph
  options.backend = Backend::kCpu;
  EXPECT_EQ(TimingFootprintBytes(100 * mb, options, false), 900 * mb);
}

TEST_F(TimedCaseTest, RoundsAlternateAndReportColdAndWarm) {
  TimedCase t = Run();
  ASSERT_FALSE(t.failure) << t.failure->message;
  EXPECT_DOUBLE_EQ(t.reference_ms, 2.0);
  EXPECT_DOUBLE_EQ(t.candidate_ms, 1.0);
  const Json row = RecordJson(t.record);
  EXPECT_EQ(row["method"], "monotonic_clock");
  EXPECT_EQ(row["stop"], "settled");  // zero noise: stops at min_samples
  EXPECT_EQ(row["rounds"], 2);
  EXPECT_EQ(row["reference_samples"], 10);
  EXPECT_DOUBLE_EQ(row["reference_warm_ms"], 1.0);
  EXPECT_DOUBLE_EQ(row["speedup"], 2.0);
  EXPECT_DOUBLE_EQ(row["warm_speedup"], 2.0);
  EXPECT_EQ(row["recheck"], "ok");
  EXPECT_EQ(row["sensors_before"]["sm_mhz"], 1700);  // read in the warm-up
  EXPECT_EQ(row["sensors_after"]["sm_mhz"], 1980);
  EXPECT_EQ(row["reference_kept"], false);
  for (const char* stage : {"prepare", "start", "sampling", "sampling_compare", "compare", "finish"})
    EXPECT_TRUE(row["stage_ms"].contains(stage)) << stage;
  std::vector<std::string> expected{
      "reference:time_start", "candidate:time_start",  // beside other lanes' work
      "gate:alone",                                      // the device to itself
      "reference:time_warmup", "candidate:time_warmup",
      "reference:time_sample:monotonic_clock", "candidate:time_sample:monotonic_clock",
      "candidate:time_sample:monotonic_clock", "reference:time_sample:monotonic_clock",
      "gate:share",                                      // the re-check beside other lanes' work
      "reference:time_finish", "candidate:time_finish",
      "gate:done"};                                      // the comparison holds nothing
  EXPECT_EQ(fake_->log, expected);
}

// Every timed sample runs on inputs of its own seed, drawn by the engine; both sides
// get the same seeds, and each sample's output is compared.
TEST_F(TimedCaseTest, SamplesRunOnFreshSeedsAndTheirOutputsAreCompared) {
  TimedCase t = Run();
  ASSERT_FALSE(t.failure) << t.failure->message;
  EXPECT_EQ(fake_->samples, 40);  // 2 rounds x 2 sides x (5 cold + 5 warm)
  EXPECT_EQ(fake_->flushes, 20);
  EXPECT_EQ(RecordJson(t.record)["samples_compared"], 20);  // small outputs: every sample of both rounds
  EXPECT_EQ(RecordJson(t.record)["engine_clock"]["applied"], false);
  // 20 distinct seeds, each given to both sides, none one more than another: a seed seen
  // says nothing of the next (consecutive seeds let a candidate work ahead while unclocked).
  EXPECT_EQ(fake_->seen_seeds.size(), 20u);
  for (int64_t seed : fake_->seen_seeds) EXPECT_EQ(fake_->seen_seeds.count(seed + 1), 0u) << seed;
  // The files of the samples are gone.
  for (const auto& entry : std::filesystem::directory_iterator(dir_->path()))
    EXPECT_EQ(entry.path().filename().string().rfind("timed_", 0), std::string::npos) << entry.path();
}

// A candidate whose timed calls differ from its checked ones (it can tell them apart):
// the timed samples' outputs are the ones compared.
TEST_F(TimedCaseTest, ATimedSampleThatDiffersIsAMismatch) {
  fake_->candidate_sample_output = {0, 1, 5};
  TimedCase t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kMismatch);
  EXPECT_NE(t.failure->message.find("timed sample 0 of round 0"), std::string::npos) << t.failure->message;
}

// A candidate whose timed calls write wrong outputs and whose process puts them right
// after each reply (outside the time the engine clocked): the files no longer hold what
// its worker said it wrote, from the first sample on.
TEST_F(TimedCaseTest, AnOutputPutRightAfterItsReplyIsStillAMismatch) {
  fake_->candidate_sample_output = {0, 1, 5};
  fake_->candidate_fixes_outputs_later = true;
  TimedCase t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kMismatch);
  EXPECT_NE(t.failure->message.find("changed after its worker wrote it (timed sample 0 of round 0"), std::string::npos)
      << t.failure->message;
}

// A worker that says it wrote other bytes than the file holds when the engine reads it
// (the file was put right before the engine stopped the candidate's processes).
TEST_F(TimedCaseTest, AnOutputFileChangedAfterItsWorkerWroteItIsAMismatch) {
  fake_->candidate_sample_digest = std::string(64, 'a');
  TimedCase t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kMismatch);
  EXPECT_NE(t.failure->message.find("changed after its worker wrote it (timed sample 0 of round 0"), std::string::npos)
      << t.failure->message;
}

// A worker that sends no digest of what it wrote is no worker of ours.
TEST_F(TimedCaseTest, ASampleReplyWithoutADigestIsAForgedReply) {
  fake_->candidate_sample_digest = "short";
  TimedCase t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kCrash);
  EXPECT_NE(t.failure->message.find("no digest"), std::string::npos) << t.failure->message;
}

// Sample outputs are read as files of about the reference's size only.
TEST_F(TimedCaseTest, ASampleOutputThatIsNoPlainFileIsTheCandidatesCrash) {
  fake_->candidate_sample_output = std::vector<float>(1 << 20, 1.0f);  // 4 MiB against 12 bytes
  TimedCase t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kCrash);
  EXPECT_NE(t.failure->message.find("candidate output unreadable"), std::string::npos) << t.failure->message;
  EXPECT_NE(t.failure->message.find("expected at most"), std::string::npos) << t.failure->message;
}

// A view of the input handed back by timed calls only: the values may be right, the
// work is not done.
TEST_F(TimedCaseTest, ATimedOutputThatAliasesAnInputIsAMismatch) {
  fake_->candidate_sample_aliases = Json::parse(R"([{"output": "output", "input": 0}])");
  TimedCase t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kMismatch);
  EXPECT_NE(t.failure->message.find("shares memory with input 0"), std::string::npos) << t.failure->message;
  fake_->candidate_sample_aliases = Json("garbage");
  t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kCrash);
}

TEST_F(TimedCaseTest, InputsModifiedByATimedSampleAreAMismatch) {
  fake_->candidate_modifies_sampled_inputs = true;
  TimedCase t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kMismatch);
  EXPECT_NE(t.failure->message.find("modified its inputs"), std::string::npos) << t.failure->message;
}

// A candidate's worker that reports less time than its requests took (a patched timer,
// a forged reply): the engine's clock sets its samples.
TEST_F(TimedCaseTest, TheEngineClockBoundsForgedSampleTimes) {
  options_.timing.clock_slack = TimingSettings{}.clock_slack;
  // Long enough that a loaded test machine's scheduling delays do not hide it.
  fake_->reference_ms = 20.0, fake_->reference_sleep_ms = 20.0;
  fake_->candidate_ms = 0.2, fake_->candidate_sleep_ms = 20.0;  // claims 100x
  TimedCase t = Run();
  ASSERT_FALSE(t.failure) << t.failure->message;
  EXPECT_EQ(RecordJson(t.record)["engine_clock"]["applied"], true) << RecordJson(t.record)["engine_clock"].dump();
  EXPECT_LT(RecordJson(t.record)["speedup"].get<double>(), 2.0) << RecordJson(t.record)["engine_clock"].dump();
  EXPECT_GE(t.candidate_ms, 10.0);
}

// A forger whose sample requests carry less overhead than the reference's: the
// samples' clock, which takes the reference's overhead off, catches it but leaves it
// faster than it is (1.6x on an H100). Caught, it is bursted too, without slack.
TEST_F(TimedCaseTest, BurstsSetTheTimeOfAForgerTheEngineClockCaught) {
  options_.timing.clock_slack = TimingSettings{}.clock_slack;
  fake_->reference_ms = 20.0, fake_->reference_sleep_ms = 30.0, fake_->reference_burst_ms = 10.0;
  fake_->candidate_ms = 0.2, fake_->candidate_sleep_ms = 22.0, fake_->candidate_burst_ms = 10.0;  // claims 100x
  TimedCase t = Run();
  ASSERT_FALSE(t.failure) << t.failure->message;
  const Json clock = RecordJson(t.record)["engine_clock"];
  EXPECT_EQ(clock["applied"], true) << clock.dump();
  ASSERT_TRUE(clock.contains("bursts")) << clock.dump();
  EXPECT_EQ(clock["bursts"]["applied"], true) << clock.dump();
  EXPECT_LT(RecordJson(t.record)["speedup"].get<double>(), 1.3) << clock.dump();
}

// An honest candidate's report stands: its requests take what it says, plus what the
// reference's take besides their calls.
TEST_F(TimedCaseTest, AnHonestReportStandsAgainstTheEngineClock) {
  options_.timing.clock_slack = TimingSettings{}.clock_slack;
  // Samples long enough that a loaded host's late wake-ups (a few ms, more for one side
  // than the other) stay within the slack: at 10 ms a CI run clocked 12.6 ms.
  fake_->reference_ms = 100.0, fake_->reference_sleep_ms = 100.0;
  fake_->candidate_ms = 50.0, fake_->candidate_sleep_ms = 50.0;
  TimedCase t = Run();
  ASSERT_FALSE(t.failure) << t.failure->message;
  EXPECT_EQ(RecordJson(t.record)["engine_clock"]["applied"], false) << RecordJson(t.record)["engine_clock"].dump();
  EXPECT_DOUBLE_EQ(RecordJson(t.record)["speedup"].get<double>(), 2.0);
}

// On a busy host the reference's sample requests vary by more than a sample's whole
// device time: the samples' clock is blind to a forged report, and long bursts of both
// sides, clocked, set the candidate's time.
TEST_F(TimedCaseTest, BurstsBoundForgedTimesWhereTheSamplesClockIsBlind) {
  options_.timing.clock_slack = TimingSettings{}.clock_slack;
  fake_->reference_ms = 2.0, fake_->reference_sleep_ms = 2.0;
  fake_->candidate_ms = 0.2, fake_->candidate_sleep_ms = 2.0;  // claims 10x
  fake_->reference_sample_jitter_ms = {0, 40};
  TimedCase t = Run();
  ASSERT_FALSE(t.failure) << t.failure->message;
  const Json clock = RecordJson(t.record)["engine_clock"];
  EXPECT_EQ(clock["applied"], false) << clock.dump();
  EXPECT_EQ(clock["blind"], true) << clock.dump();
  ASSERT_TRUE(clock.contains("bursts")) << clock.dump();
  EXPECT_EQ(clock["bursts"]["applied"], true) << clock.dump();
  EXPECT_EQ(fake_->bursts, 4 * clock["bursts"]["pairs"].get<int>());  // a short and a long, both sides
  EXPECT_LT(RecordJson(t.record)["speedup"].get<double>(), 2.0) << clock.dump();
}

TEST_F(TimedCaseTest, AnHonestReportStandsAgainstBursts) {
  options_.timing.clock_slack = TimingSettings{}.clock_slack;
  fake_->reference_ms = 2.0, fake_->reference_sleep_ms = 2.0;
  fake_->candidate_ms = 1.0, fake_->candidate_sleep_ms = 1.0;
  fake_->reference_sample_jitter_ms = {0, 40};
  TimedCase t = Run();
  ASSERT_FALSE(t.failure) << t.failure->message;
  const Json clock = RecordJson(t.record)["engine_clock"];
  EXPECT_EQ(clock["blind"], true) << clock.dump();
  EXPECT_EQ(clock["bursts"]["applied"], false) << clock.dump();
  EXPECT_DOUBLE_EQ(RecordJson(t.record)["speedup"].get<double>(), 2.0);
}

// With events, each reported sample carries its launch and synchronisation (0.11 ms on
// an H100), which back-to-back bursts do not: the reference's reports are 10x its
// bursts. A forger that reports its bursts' time alone claims 10x; the reference's gap
// is added to its bursts and it gains nothing (cuda/relu.forge-encoder on the legacy
// default stream, 10.2x on an H100 before).
TEST_F(TimedCaseTest, BurstsBoundAForgerThatHidesTheSamplesOwnCost) {
  options_.timing.clock_slack = TimingSettings{}.clock_slack;
  fake_->reference_ms = 2.0, fake_->reference_sleep_ms = 2.0, fake_->reference_burst_ms = 0.1;
  fake_->candidate_ms = 0.2, fake_->candidate_sleep_ms = 2.0, fake_->candidate_burst_ms = 0.1;  // claims 10x
  fake_->reference_sample_jitter_ms = {0, 40};
  fake_->device_call_ms = 0.1;  // the warm-up's burst: bursts of 20 ms
  TimedCase t = Run();
  ASSERT_FALSE(t.failure) << t.failure->message;
  const Json clock = RecordJson(t.record)["engine_clock"];
  EXPECT_EQ(clock["blind"], true) << clock.dump();
  ASSERT_TRUE(clock.contains("bursts")) << clock.dump();
  EXPECT_EQ(clock["bursts"]["applied"], true) << clock.dump();
  EXPECT_LT(RecordJson(t.record)["speedup"].get<double>(), 1.5) << clock.dump();
}

// The same reference beside an honest candidate whose device time is half the
// reference's: its reports carry the same cost, and they stand.
TEST_F(TimedCaseTest, AnHonestReportWithTheSamplesOwnCostStandsAgainstBursts) {
  options_.timing.clock_slack = TimingSettings{}.clock_slack;
  fake_->reference_ms = 2.0, fake_->reference_sleep_ms = 2.0, fake_->reference_burst_ms = 0.1;
  fake_->candidate_ms = 1.9, fake_->candidate_sleep_ms = 1.9, fake_->candidate_burst_ms = 0.05;
  fake_->reference_sample_jitter_ms = {0, 40};
  fake_->device_call_ms = 0.1;
  TimedCase t = Run();
  ASSERT_FALSE(t.failure) << t.failure->message;
  const Json clock = RecordJson(t.record)["engine_clock"];
  EXPECT_EQ(clock["blind"], true) << clock.dump();
  EXPECT_EQ(clock["bursts"]["applied"], false) << clock.dump();
  EXPECT_DOUBLE_EQ(RecordJson(t.record)["speedup"].get<double>(), 2.0 / 1.9);
}

// Where the samples' clock can see, no bursts are sent.
TEST_F(TimedCaseTest, NoBurstsWhereTheSamplesClockSees) {
  options_.timing.clock_slack = TimingSettings{}.clock_slack;
  fake_->reference_ms = 20.0, fake_->reference_sleep_ms = 20.0;
  fake_->candidate_ms = 10.0, fake_->candidate_sleep_ms = 10.0;
  TimedCase t = Run();
  ASSERT_FALSE(t.failure) << t.failure->message;
  EXPECT_EQ(RecordJson(t.record)["engine_clock"]["blind"], false) << RecordJson(t.record)["engine_clock"].dump();
  EXPECT_EQ(fake_->bursts, 0);
}

TEST_F(TimedCaseTest, WithoutFlushOnlyWarmSamplesCount) {
  options_.timing.flush = false;
  TimedCase t = Run();
  ASSERT_FALSE(t.failure);
  EXPECT_DOUBLE_EQ(t.reference_ms, 1.0);
  EXPECT_FALSE(RecordJson(t.record).contains("reference_cold_ms"));
  EXPECT_FALSE(RecordJson(t.record).contains("warm_speedup"));
}

TEST_F(TimedCaseTest, TimedOutputThatDiffersIsAMismatch) {
  fake_->candidate_output = {0, 1, 5};
  TimedCase t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kMismatch);
  EXPECT_NE(t.failure->message.find("timed call differs"), std::string::npos) << t.failure->message;
}

TEST_F(TimedCaseTest, LargeOutputsAreRecheckedOnTheDevice) {
  outputs_on_device_ = true;
  TimedCase t = Run();
  ASSERT_FALSE(t.failure) << t.failure->message;
  EXPECT_EQ(RecordJson(t.record)["recheck"], "ok");
  EXPECT_EQ(RecordJson(t.record)["recheck_on"], "device");
  EXPECT_EQ(fake_->handoff_compares, 21);  // 20 samples and the re-check
  EXPECT_EQ(fake_->handoff_releases, 0);   // each comparison ended its offer
}

// Cases compared on the device: no sample is written to a file; both sides keep each
// sample's output there, and those drawn after the round are handed over and compared.
TEST_F(TimedCaseTest, LargeCasesKeepTheirSamplesOnTheDeviceAndCompareThemThere) {
  outputs_on_device_ = true;
  TimedCase t = Run();
  ASSERT_FALSE(t.failure) << t.failure->message;
  EXPECT_EQ(RecordJson(t.record)["samples_on"], "device");
  EXPECT_EQ(RecordJson(t.record)["samples_compared"], 20);  // small outputs: every sample of both rounds
  EXPECT_EQ(fake_->sample_outputs, 40);      // each compared sample from both sides
  EXPECT_EQ(fake_->handoff_compares, 21);    // 20 samples and the re-check
  for (const auto& entry : std::filesystem::directory_iterator(dir_->path()))
    EXPECT_EQ(entry.path().filename().string().rfind("timed_", 0), std::string::npos) << entry.path();
}

TEST_F(TimedCaseTest, AKeptSampleThatDiffersOnTheDeviceIsAMismatch) {
  outputs_on_device_ = true;
  fake_->candidate_sample_output = {0, 1, 5};
  TimedCase t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kMismatch);
  EXPECT_NE(t.failure->message.find("timed sample 0 of round 0"), std::string::npos) << t.failure->message;
}

TEST_F(TimedCaseTest, AKeptSampleTheReferenceCannotOfferIsComparedFromFiles) {
  outputs_on_device_ = true;
  fake_->reference_declines = true;
  fake_->candidate_sample_output = {0, 1, 5};
  TimedCase t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kMismatch);
  EXPECT_EQ(fake_->handoff_compares, 0);
}

// Large outputs: kComparedPerRound of each round's samples, drawn after it.
TEST_F(TimedCaseTest, LargeKeptSamplesAreComparedThreeARound) {
  outputs_on_device_ = true;
  fake_->reference_layout["tensors"][0]["shape"] = Json::array({int64_t{8} << 20});  // 32 MiB of float32
  TimedCase t = Run();
  ASSERT_FALSE(t.failure) << t.failure->message;
  EXPECT_EQ(RecordJson(t.record)["samples_compared"], 6);
  EXPECT_EQ(fake_->sample_outputs, 12);  // 3 a round from each side; the others are never sent
}

// Outputs too large to keep a round of: timed samples are not compared (the limit is
// in docs/timing.md), and no sample is asked to keep or write anything.
TEST_F(TimedCaseTest, SamplesTooLargeToKeepAreLeftUnchecked) {
  outputs_on_device_ = true;
  fake_->reference_layout["tensors"][0]["shape"] = Json::array({int64_t{1} << 30});  // 4 GiB, 10 a round
  TimedCase t = Run();
  ASSERT_FALSE(t.failure) << t.failure->message;
  EXPECT_EQ(RecordJson(t.record)["samples_on"], "unchecked");
  EXPECT_EQ(RecordJson(t.record)["samples_compared"], 0);
  EXPECT_EQ(fake_->sample_outputs, 0);
  EXPECT_TRUE(fake_->kept[0].empty());
}

TEST_F(TimedCaseTest, TimedOutputsNeverHandedOverAreAForgedReply) {
  outputs_on_device_ = true;
  fake_->handoff_served = false;
  TimedCase t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kCrash);
  EXPECT_NE(t.failure->message.find("never handed over"), std::string::npos) << t.failure->message;
}

TEST_F(TimedCaseTest, AnOfferIsReleasedWhenTheCandidateFails) {
  outputs_on_device_ = true;
  fake_->candidate_modifies_inputs = true;
  TimedCase t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(fake_->handoff_compares, 20);  // the samples'; the re-check's offer is released
  EXPECT_EQ(fake_->handoff_releases, 1);
}

TEST_F(TimedCaseTest, RecheckCanBeSwitchedOff) {
  fake_->candidate_output = {0, 1, 5};
  options_.timing.recheck = false;
  TimedCase t = Run();
  ASSERT_FALSE(t.failure);
  EXPECT_EQ(RecordJson(t.record)["recheck"], "skipped");
}

TEST_F(TimedCaseTest, InputsModifiedWhileTimedIsAMismatch) {
  fake_->candidate_modifies_inputs = true;
  TimedCase t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kMismatch);
}

TEST_F(TimedCaseTest, IrreproducibleInputsAreATaskError) {
  fake_->candidate_digest = "other";
  fake_->reference_irreproducible = true;
  TimedCase t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kTaskError);
  EXPECT_EQ(fake_->reference_starts, 2);  // the reference worker tried again
}

// The reference worker dies after its time_start and cannot start again for the digest
// check: nothing is learnt of the task's inputs, nor of the candidate's.
TEST_F(TimedCaseTest, AReferenceWorkerThatCannotRestartIsTheEngines) {
  fake_->candidate_digest = "other";  // the digest check asks the reference worker again
  auto session = Session(fake_);
  ASSERT_TRUE(session->Get(WorkerRole::kCandidate));
  auto ref = session->Get(WorkerRole::kReference);
  ASSERT_TRUE(ref);
  FakeWorker* w = static_cast<FakeWorker*>(*ref);
  w->Handle("time_start", [this, w](const Json&) {
    w->Kill();
    refuse_starts_ = true;
    return FakeWorker::Ok(Json{{"input_digest", "d"}});
  });
  TimedCaseRequest req{task_, 0, 1000, options_, dir_->path(), {}};
  PreparedCase prepared = PrepareCase(*session, req);
  ASSERT_TRUE(prepared.failure);
  EXPECT_EQ(prepared.failure->status, OutcomeStatus::kInfraError) << prepared.failure->message;
  EXPECT_NE(prepared.failure->message.find("could not start"), std::string::npos) << prepared.failure->message;
}

TEST_F(TimedCaseTest, ADigestOnlyTheCandidateReportsIsItsCrash) {
  fake_->candidate_digest = "forged";  // the reference worker reproduces "d"
  TimedCase t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kCrash);
  EXPECT_NE(t.failure->message.find("forged"), std::string::npos) << t.failure->message;
}

TEST_F(TimedCaseTest, NoisySamplesStopAtTheCaps) {
  options_.timing.noise_target = 0;  // never settled
  options_.timing.max_samples = 20;
  TimedCase t = Run();
  ASSERT_FALSE(t.failure);
  EXPECT_EQ(RecordJson(t.record)["stop"], "settled");  // zero-noise samples still meet a zero target
  options_.timing.noise_target = -1;
  t = Run();
  EXPECT_EQ(RecordJson(t.record)["stop"], "max_samples");
  EXPECT_EQ(RecordJson(t.record)["candidate_samples"], 20);
}

TEST_F(TimedCaseTest, TinyCallsUseGraphsAndFallBackToEvents) {
  options_.backend = Backend::kCuda;
  options_.timing.graph_below_ms = 0.05;
  fake_->call_ms = 0.01;
  TimedCase t = Run();
  ASSERT_FALSE(t.failure);
  EXPECT_EQ(RecordJson(t.record)["method"], "cuda_graph");
  fake_->log.clear();
  fake_->graph_fails = true;
  t = Run();
  ASSERT_FALSE(t.failure);
  EXPECT_EQ(RecordJson(t.record)["method"], "cuda_events");
  EXPECT_EQ(RecordJson(t.record)["graph_fallback"], "no");
  EXPECT_EQ(RecordJson(t.record)["reference_samples"], 10);  // samples taken before the fallback are dropped
  options_.timing.graph = GraphMode::kNever;
  fake_->graph_fails = false;
  EXPECT_EQ(RecordJson(Run().record)["method"], "cuda_events");
}

// Both sides replay graphs of the same size, the reference's (or the candidate's, when
// it can hold fewer); a candidate's worker that claims a size it was not asked is a crash.
TEST_F(TimedCaseTest, GraphsHoldTheSameCallsOnBothSides) {
  options_.backend = Backend::kCuda;
  options_.timing.graph_below_ms = 0.05;
  fake_->call_ms = 0.01;
  TimedCase t = Run();
  ASSERT_FALSE(t.failure) << t.failure->message;
  EXPECT_EQ(RecordJson(t.record)["reference_graph_calls"], 50);
  EXPECT_EQ(RecordJson(t.record)["candidate_graph_calls"], 50);
  fake_->candidate_graph_calls = 20;
  t = Run();
  ASSERT_FALSE(t.failure) << t.failure->message;
  EXPECT_EQ(RecordJson(t.record)["reference_graph_calls"], 20);
  fake_->candidate_graph_calls = 500;
  t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kCrash);
}

// call_ms carries a host round trip per call; the method follows the device time
// of the warm-up's burst when the workers send it.
TEST_F(TimedCaseTest, GraphsAreChosenByDeviceTimePerCall) {
  options_.backend = Backend::kCuda;
  options_.timing.graph_below_ms = 0.05;
  fake_->call_ms = 0.08;  // above graph_below_ms: events, if chosen by call_ms
  fake_->device_call_ms = 0.004;
  TimedCase t = Run();
  ASSERT_FALSE(t.failure);
  EXPECT_EQ(RecordJson(t.record)["method"], "cuda_graph");
  EXPECT_EQ(RecordJson(t.record)["candidate_device_call_ms"], 0.004);
  fake_->call_ms = 0.01;
  fake_->device_call_ms = 0.2;  // a round trip cannot make a long kernel look short
  EXPECT_EQ(RecordJson(Run().record)["method"], "cuda_events");
}

// The preparation asks each side to capture a graph ahead when its calls look short
// enough (the quiet device decides later); the reference is kept for the next timing.
TEST_F(TimedCaseTest, PreparationAsksForGraphsAheadAndKeepsTheReference) {
  auto graph_below = [this] {
    fake_->starts.clear();
    EXPECT_FALSE(Run().failure);
    EXPECT_EQ(fake_->starts.size(), 2u);
    EXPECT_EQ(fake_->starts[0]["graph_below_ms"], fake_->starts[1]["graph_below_ms"]);
    EXPECT_FALSE(fake_->starts[0].contains("warmup_ms"));  // warmed up in the hold
    return fake_->starts[0]["graph_below_ms"].get<double>();
  };
  EXPECT_EQ(graph_below(), 0);  // the CPU backend: no graphs
  options_.backend = Backend::kCuda;
  options_.timing.graph_below_ms = 0.25;
  EXPECT_EQ(graph_below(), 0.25);
  options_.timing.graph = GraphMode::kAlways;
  EXPECT_GT(graph_below(), 1e6);
  options_.timing.graph = GraphMode::kNever;
  EXPECT_EQ(graph_below(), 0);
  ASSERT_EQ(fake_->finishes.size(), 8u);
  for (size_t i = 0; i < fake_->finishes.size(); i += 2) {
    EXPECT_EQ(fake_->finishes[i]["keep"], true);              // the reference's
    EXPECT_FALSE(fake_->finishes[i + 1].contains("keep"));    // the candidate's
  }
  fake_->reference_kept = true;
  EXPECT_EQ(RecordJson(Run().record)["reference_kept"], true);
}

// A candidate whose digest differs: the reference makes its inputs again, not from a
// side it kept.
TEST_F(TimedCaseTest, ADigestCheckMakesTheReferenceInputsAgain) {
  fake_->candidate_digest = "forged";
  fake_->reference_kept = true;
  ASSERT_TRUE(Run().failure);
  ASSERT_EQ(fake_->starts.size(), 3u);
  EXPECT_FALSE(fake_->starts[0].contains("fresh"));
  EXPECT_EQ(fake_->starts[2]["fresh"], true);
}

TEST_F(TimedCaseTest, ACandidateFailureIsItsOutcome) {
  fake_->candidate_batch_raises = true;
  TimedCase t = Run();
  ASSERT_TRUE(t.failure);
  EXPECT_EQ(t.failure->status, OutcomeStatus::kRuntimeError);
  EXPECT_NE(t.failure->message.find("timing case big: boom"), std::string::npos) << t.failure->message;
}

// Group turns: this fixture's session leads (its reference is timed), `others`' follow.
class GroupTurnTest : public TimedCaseTest {
 protected:
  struct Lane {
    std::shared_ptr<FakeTiming> fake;
    std::unique_ptr<DeviceSession> session;
    std::unique_ptr<TimedCaseRequest> request;
    TurnMember member;
  };

  std::unique_ptr<Lane> MakeLane(std::shared_ptr<FakeTiming> fake, const std::string& name) {
    auto lane = std::make_unique<Lane>();
    lane->fake = fake;
    lane->session = Session(fake);
    const std::string scratch = dir_->path() + "/" + name;
    std::filesystem::create_directories(scratch);
    lane->request = std::make_unique<TimedCaseRequest>(TimedCaseRequest{task_, 0, 1000, options_, scratch, {}});
    lane->request->outputs_on_device = outputs_on_device_;
    lane->request->turn.alone = [fake]() -> Result<TurnStart> {
      fake->log.push_back("gate:alone");
      return TurnStart{};
    };
    lane->request->turn.share = [fake] { fake->log.push_back("gate:share"); };
    lane->request->turn.done = [fake] { fake->log.push_back("gate:done"); };
    lane->member.session = lane->session.get();
    lane->member.request = lane->request.get();
    lane->member.prepared = PrepareCase(*lane->session, *lane->request);
    return lane;
  }

  // Times the leader and every follower in one turn, then each re-checks.
  void RunGroup(std::vector<std::shared_ptr<FakeTiming>> others) {
    leader_ = MakeLane(fake_, "lead");
    for (size_t k = 0; k < others.size(); ++k) followers_.push_back(MakeLane(others[k], "f" + std::to_string(k)));
    ASSERT_FALSE(leader_->member.prepared.failure);
    std::vector<TurnMember*> joined;
    for (auto& f : followers_) joined.push_back(&f->member);
    TimeTurn(leader_->member, [&] { return joined; });
    for (auto& f : followers_) RecheckCase(f->member);
    RecheckCase(leader_->member);
  }

  static int Count(const std::vector<std::string>& log, const std::string& entry) {
    return static_cast<int>(std::count(log.begin(), log.end(), entry));
  }

  std::unique_ptr<Lane> leader_;
  std::vector<std::unique_ptr<Lane>> followers_;
};

TEST_F(GroupTurnTest, OneReferenceSeriesTimesEveryMember) {
  auto other = std::make_shared<FakeTiming>();
  other->candidate_ms = 0.5;
  RunGroup({other});
  const TimedCase& a = leader_->member.timed;
  const TimedCase& b = followers_[0]->member.timed;
  ASSERT_FALSE(a.failure) << a.failure->message;
  ASSERT_FALSE(b.failure) << b.failure->message;
  EXPECT_DOUBLE_EQ(a.reference_ms, 2.0);
  EXPECT_DOUBLE_EQ(b.reference_ms, 2.0);
  EXPECT_DOUBLE_EQ(a.candidate_ms, 1.0);
  EXPECT_DOUBLE_EQ(b.candidate_ms, 0.5);
  EXPECT_DOUBLE_EQ(RecordJson(b.record)["speedup"], 4.0);
  EXPECT_EQ(RecordJson(a.record)["turn_candidates"], 2);
  EXPECT_EQ(RecordJson(b.record)["turn_candidates"], 2);
  EXPECT_EQ(RecordJson(a.record)["rounds"], RecordJson(b.record)["rounds"]);
  EXPECT_EQ(RecordJson(b.record)["candidate_samples"], 10);
  // The follower's own reference worker prepared and re-checks; it was never timed.
  EXPECT_EQ(Count(other->log, "reference:time_warmup"), 0);
  EXPECT_EQ(Count(other->log, "reference:time_sample:monotonic_clock"), 0);
  EXPECT_EQ(Count(other->log, "candidate:time_warmup"), 1);
  EXPECT_EQ(Count(fake_->log, "reference:time_warmup"), 1);
  EXPECT_EQ(Count(other->log, "reference:time_finish"), 1);
  EXPECT_EQ(Count(other->log, "candidate:time_finish"), 1);
  EXPECT_EQ(RecordJson(b.record)["recheck"], "ok");
  // Only the leader's turn takes and shares the device; each member's re-check ends its own hold.
  EXPECT_EQ(Count(other->log, "gate:alone"), 0);
  EXPECT_EQ(Count(other->log, "gate:share"), 0);
  EXPECT_EQ(Count(other->log, "gate:done"), 1);
  EXPECT_EQ(Count(fake_->log, "gate:alone"), 1);
  EXPECT_EQ(Count(fake_->log, "gate:share"), 1);
  EXPECT_EQ(Count(fake_->log, "gate:done"), 1);
}

TEST_F(GroupTurnTest, EachRoundTurnsWhoGoesFirst) {
  auto b = std::make_shared<FakeTiming>(), c = std::make_shared<FakeTiming>();
  RunGroup({b, c});
  ASSERT_FALSE(leader_->member.timed.failure);
  // Round 0 begins with the reference, round 1 with the leader's candidate.
  std::vector<std::string> leader_samples;
  for (const std::string& e : fake_->log)
    if (e.find(":time_sample:") != std::string::npos) leader_samples.push_back(e);
  ASSERT_GE(leader_samples.size(), 4u);
  EXPECT_EQ(leader_samples[0], "reference:time_sample:monotonic_clock");
  EXPECT_EQ(leader_samples[1], "candidate:time_sample:monotonic_clock");
  EXPECT_EQ(leader_samples[2], "candidate:time_sample:monotonic_clock");
  EXPECT_EQ(leader_samples[3], "reference:time_sample:monotonic_clock");
  EXPECT_EQ(RecordJson(followers_[1]->member.timed.record)["turn_candidates"], 3);
}

TEST_F(GroupTurnTest, AMemberThatFailsLeavesTheTurnAndTheOthersGoOn) {
  auto bad = std::make_shared<FakeTiming>(), good = std::make_shared<FakeTiming>();
  bad->candidate_batch_raises = true;
  good->candidate_ms = 0.25;
  RunGroup({bad, good});
  ASSERT_FALSE(leader_->member.timed.failure) << leader_->member.timed.failure->message;
  ASSERT_TRUE(followers_[0]->member.timed.failure);
  EXPECT_EQ(followers_[0]->member.timed.failure->status, OutcomeStatus::kRuntimeError);
  EXPECT_EQ(Count(bad->log, "candidate:time_finish"), 0);  // no re-check after a failure
  ASSERT_FALSE(followers_[1]->member.timed.failure) << followers_[1]->member.timed.failure->message;
  EXPECT_DOUBLE_EQ(RecordJson(followers_[1]->member.timed.record)["speedup"], 8.0);
}

TEST_F(GroupTurnTest, AFailingLeaderCandidateLeavesTheFollowersTimed) {
  fake_->candidate_batch_raises = true;
  auto other = std::make_shared<FakeTiming>();
  RunGroup({other});
  ASSERT_TRUE(leader_->member.timed.failure);
  ASSERT_FALSE(followers_[0]->member.timed.failure) << followers_[0]->member.timed.failure->message;
  EXPECT_DOUBLE_EQ(RecordJson(followers_[0]->member.timed.record)["speedup"], 2.0);
}

// Kept samples: the reference keeps each one it hands over for the next candidate,
// and every candidate's output of the sample is compared with it (here from files:
// the fakes' device comparison is the reference worker's own state).
TEST_F(GroupTurnTest, KeptSamplesAreComparedWithEveryMember) {
  outputs_on_device_ = true;
  fake_->reference_declines = true;
  auto same = std::make_shared<FakeTiming>(), differs = std::make_shared<FakeTiming>();
  differs->candidate_sample_output = {0, 1, 5};
  RunGroup({same, differs});
  ASSERT_FALSE(leader_->member.timed.failure) << leader_->member.timed.failure->message;
  ASSERT_FALSE(followers_[0]->member.timed.failure) << followers_[0]->member.timed.failure->message;
  EXPECT_EQ(RecordJson(followers_[0]->member.timed.record)["samples_compared"], 20);
  ASSERT_TRUE(followers_[1]->member.timed.failure);
  EXPECT_EQ(followers_[1]->member.timed.failure->status, OutcomeStatus::kMismatch);
  EXPECT_NE(followers_[1]->member.timed.failure->message.find("timed sample 0 of round 0"), std::string::npos)
      << followers_[1]->member.timed.failure->message;
}

// Graphs: a member that holds fewer calls sets the number for every side.
TEST_F(GroupTurnTest, GraphsHoldTheSameCallsOnEverySide) {
  options_.backend = Backend::kCuda;
  options_.timing.graph = GraphMode::kAlways;
  auto other = std::make_shared<FakeTiming>();
  other->candidate_graph_calls = 20;
  RunGroup({other});
  ASSERT_FALSE(leader_->member.timed.failure) << leader_->member.timed.failure->message;
  ASSERT_FALSE(followers_[0]->member.timed.failure) << followers_[0]->member.timed.failure->message;
  EXPECT_EQ(RecordJson(leader_->member.timed.record)["method"], "cuda_graph");
  EXPECT_EQ(RecordJson(leader_->member.timed.record)["candidate_graph_calls"], 20);
  EXPECT_EQ(RecordJson(followers_[0]->member.timed.record)["reference_graph_calls"], 20);
}

// A reference that fails ends the turn for every member: as the task's error where the
// task's code failed, as the engine's where the worker's machinery or protocol did.
TEST_F(GroupTurnTest, AReferenceFailureEndsEveryMember) {
  struct Case {
    WorkerReply sample;  // the leader's reference's answer to time_sample
    OutcomeStatus status;
    const char* says;
  };
  auto failed = [](const char* kind, const char* message) {
    WorkerReply r;
    r.response = Json{{"ok", false}, {"kind", kind}, {"message", message}};
    return r;
  };
  const Case cases[] = {
      {failed("task_error", "the reference forward raised: ValueError"), OutcomeStatus::kTaskError,
       "the reference forward raised"},
      {failed("internal", "worker error in time_sample: KeyError"), OutcomeStatus::kInfraError,
       "failed (internal): worker error"},
      {FakeWorker::Ok(Json::object()), OutcomeStatus::kInfraError, "reference's worker sent no time"},
  };
  for (const Case& c : cases) {
    followers_.clear();
    auto other = std::make_shared<FakeTiming>();
    leader_ = MakeLane(fake_, "lead");
    followers_.push_back(MakeLane(other, "f0"));
    auto w = leader_->session->Get(WorkerRole::kReference);
    ASSERT_TRUE(w);
    static_cast<FakeWorker*>(*w)->Handle("time_sample", [&c](const Json&) { return c.sample; });
    std::vector<TurnMember*> joined{&followers_[0]->member};
    TimeTurn(leader_->member, [&] { return joined; });
    ASSERT_TRUE(leader_->member.timed.failure);
    ASSERT_TRUE(followers_[0]->member.timed.failure);
    const Verification& f = *followers_[0]->member.timed.failure;
    EXPECT_EQ(f.status, c.status) << f.message;
    EXPECT_EQ(leader_->member.timed.failure->status, c.status) << c.says;
    EXPECT_NE(f.message.find(c.says), std::string::npos) << f.message;
  }
}

TEST(GpuSensorsTest, ParsesNvidiaSmiLines) {
  Json s = ParseNvidiaSmiSensors("1980, 3201, 41");
  EXPECT_EQ(s["source"], "nvidia-smi");
  EXPECT_DOUBLE_EQ(s["sm_mhz"], 1980);
  EXPECT_DOUBLE_EQ(s["temperature_c"], 41);
  EXPECT_TRUE(ParseNvidiaSmiSensors("[N/A], 3201, 41")["sm_mhz"].is_null());
  EXPECT_TRUE(ParseNvidiaSmiSensors("garbage").is_null());
  EXPECT_TRUE(ParseNvidiaSmiSensors("1, 2, 3, 4").is_null());
  EXPECT_TRUE(QuerySensorsWithTool(Backend::kCpu, 0).is_null());
}

// The kinds of every field, recursively: what a reader of a stored record relies on.
Json Shape(const Json& j) {
  if (j.is_object()) {
    Json out = Json::object();
    for (const auto& [key, value] : j.items()) out[key] = Shape(value);
    return out;
  }
  return j.is_number() ? "number" : j.type_name();
}

// The timer's records have the fields, of the kinds, that the store held before the
// records were typed: tests/golden/verification_cases.json holds records the timer
// wrote then, with the setups below (engine/verification_records_test.cc reads them
// back).
TEST_F(TimedCaseTest, RecordsKeepTheStoredShape) {
  std::map<std::string, Json> golden;
  for (const Json& rec : testing::LoadGolden("verification_cases.json").value("passed", Json::array()))
    if (rec.value("kind", "") == "timing") golden[rec.value("case", "")] = Shape(rec);
  ASSERT_EQ(golden.size(), 5u);
  auto expect_shape = [&](const char* name) {
    TimedCase t = Run();
    ASSERT_FALSE(t.failure) << name << ": " << t.failure->message;
    Json got = Shape(RecordJson(t.record)), want = golden[name];
    if (std::string(name) != "big") {  // bursts, as on a loaded host, come and go with the load
      got["engine_clock"].erase("bursts");
      want["engine_clock"].erase("bursts");
    }
    EXPECT_EQ(got, want) << name;
  };
  outputs_on_device_ = true;
  expect_shape("on_device");
  outputs_on_device_ = false;
  const EngineOptions saved = options_;
  options_.timing.flush = false;
  options_.timing.recheck = false;
  expect_shape("warm_only");
  options_ = saved;
  options_.timing.clock_slack = TimingSettings{}.clock_slack;
  fake_->reference_ms = 2.0, fake_->reference_sleep_ms = 2.0;
  fake_->candidate_ms = 0.2, fake_->candidate_sleep_ms = 2.0;
  fake_->reference_sample_jitter_ms = {0, 40};
  expect_shape("big");  // blind, bounded by bursts
  options_ = saved;
  fake_ = std::make_shared<FakeTiming>();
  options_.backend = Backend::kCuda;
  options_.timing.graph_below_ms = 0.05;
  fake_->call_ms = 0.01;
  expect_shape("graph");
  fake_->graph_fails = true;
  expect_shape("fallback");
}

}  // namespace
}  // namespace kvault
