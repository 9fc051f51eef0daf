// The two run decisions: the input digest verdict and the comparison with its
// fallback from the device to files.
#include "engine/output_check.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "check/testing/tensor_file_writer.h"
#include "util/files.h"

namespace kvault {
namespace {

using testing::TensorFileWriter;

void WriteFloats(const std::string& path, const std::vector<float>& values) {
  TensorFileWriter w;
  w.SetTree(w.Add<float>({static_cast<int64_t>(values.size())}, values));
  ASSERT_TRUE(w.WriteTo(path));
}

bool Exists(const std::string& path) {
  return std::filesystem::exists(path);
}

using Digest = Result<std::string, TrustedFailure>;

TEST(InputDigestVerdictTest, EqualDigestsAskNothing) {
  int asked = 0;
  auto again = [&]() -> Digest {
    ++asked;
    return std::string("d");
  };
  EXPECT_FALSE(InputDigestVerdict("d", "d", again));
  EXPECT_EQ(asked, 0);
}

TEST(InputDigestVerdictTest, AReproducedDigestMakesTheDifferenceTheCandidates) {
  int asked = 0;
  auto again = [&]() -> Digest {
    ++asked;
    return std::string("d");
  };
  auto fault = InputDigestVerdict("d", "forged", again);
  ASSERT_TRUE(fault);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(fault->status, OutcomeStatus::kCrash);
  EXPECT_NE(fault->message.find("forged reply"), std::string::npos) << fault->message;
}

TEST(InputDigestVerdictTest, AnIrreproducibleDigestIsTheTasks) {
  auto fault = InputDigestVerdict("d", "e", []() -> Digest { return std::string("f"); });
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->status, OutcomeStatus::kTaskError);
  EXPECT_NE(fault->message.find("not a function of the seed"), std::string::npos) << fault->message;
}

TEST(InputDigestVerdictTest, AFailureToMakeThemAgainIsNamed) {
  auto fault =
      InputDigestVerdict("d", "e", []() -> Digest {
        return TrustedFailure{OutcomeStatus::kTaskError, "reference raised"};
      });
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->status, OutcomeStatus::kTaskError);
  EXPECT_NE(fault->message.find("reference raised"), std::string::npos) << fault->message;
}

// Making them again failed for the engine's reasons (the worker could not restart,
// answered internal): nothing is learnt of the task, and the candidate is not judged.
TEST(InputDigestVerdictTest, AnEngineFailureToMakeThemAgainIsTheEngines) {
  auto fault = InputDigestVerdict("d", "e", []() -> Digest {
    return TrustedFailure{OutcomeStatus::kInfraError, "the reference worker could not start"};
  });
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->status, OutcomeStatus::kInfraError);
  EXPECT_NE(fault->message.find("could not start"), std::string::npos) << fault->message;
}

// Running out of memory making them again says nothing of the task's inputs: the
// fault says so and keeps what the out-of-memory rule reads, to be judged there.
TEST(InputDigestVerdictTest, OutOfMemoryMakingThemAgainIsNotTheInputs) {
  auto fault = InputDigestVerdict("d", "e", []() -> Digest {
    return TrustedFailure{OutcomeStatus::kTaskError,
                          "reference case x: OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB."};
  });
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->message.find("not a function of the seed"), std::string::npos) << fault->message;
  EXPECT_NE(fault->message.find("ran out of device memory making them again"), std::string::npos) << fault->message;
  EXPECT_NE(fault->message.find("Tried to allocate 8.00 GiB"), std::string::npos) << fault->message;
  EXPECT_TRUE(ReferenceRanOutOfMemory(fault->status, fault->message));
}

class CompareOutputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create();
    ASSERT_TRUE(dir);
    dir_ = std::make_unique<TempDir>(std::move(*dir));
    files_.reference = dir_->path() + "/ref.kvt";
    files_.candidate = {dir_->path() + "/first.kvt", dir_->path() + "/repeat.kvt"};
    files_.device_stem = dir_->path() + "/h";
  }

  // An offer whose reference worker answers handoff_compare with `compare` (served,
  // calls) and writes the reference output on handoff_release with `out`.
  DeviceOffer Offer(Json compare, std::optional<TrustedFailure> release_failure = std::nullopt) {
    ReferenceCall call = [this, compare, release_failure](const Json& request) -> ReferenceReply {
      requests_.push_back(request);
      const std::string op = request.value("op", std::string());
      if (op == "handoff_compare") return compare;
      if (op == "handoff_release" && request.contains("out")) {
        if (release_failure) return *release_failure;
        WriteFloats(request["out"], {0, 1, 2});
      }
      return Json{{"ok", true}};
    };
    Json layout{{"tensors", Json::array({Json{{"dtype", "float32"}, {"shape", {3}}}})}};
    return DeviceOffer(call, layout);
  }

  std::unique_ptr<TempDir> dir_;
  OutputFiles files_;
  Tolerance tolerance_;
  std::vector<Json> requests_;
};

TEST_F(CompareOutputsTest, FromFilesEveryCallUntilTheFirstMismatch) {
  WriteFloats(files_.reference, {0, 1, 2});
  WriteFloats(files_.candidate[0], {0, 1, 2});
  WriteFloats(files_.candidate[1], {0, 1, 3});
  DeviceOffer none;
  ComparedOutputs got = CompareOutputs(none, Json::object(), files_, tolerance_);
  ASSERT_FALSE(got.failure) << got.failure->message;
  EXPECT_FALSE(got.on_device);
  ASSERT_EQ(got.calls.size(), 2u);
  EXPECT_TRUE(got.calls[0].match);
  EXPECT_FALSE(got.calls[1].match);
  EXPECT_FALSE(Exists(files_.candidate[0]));
  EXPECT_FALSE(Exists(files_.candidate[1]));
  EXPECT_TRUE(Exists(files_.reference));  // the reference cache's file stays
}

TEST_F(CompareOutputsTest, ScratchReferenceIsRemoved) {
  WriteFloats(files_.reference, {0, 1, 2});
  WriteFloats(files_.candidate[0], {9, 1, 2});
  files_.remove_reference = true;
  DeviceOffer none;
  ComparedOutputs got = CompareOutputs(none, Json::object(), files_, tolerance_);
  ASSERT_EQ(got.calls.size(), 1u);  // stops at the first call that differs
  EXPECT_FALSE(got.calls[0].match);
  EXPECT_FALSE(Exists(files_.reference));
}

// The reference's file is the engine's; the candidate's was written by a worker that
// runs candidate code.
TEST_F(CompareOutputsTest, UnreadableReferenceIsInfraErrorUnreadableCandidateACrash) {
  DeviceOffer none;
  ComparedOutputs no_reference = CompareOutputs(none, Json::object(), files_, tolerance_);
  ASSERT_TRUE(no_reference.failure);
  EXPECT_EQ(no_reference.failure->status, OutcomeStatus::kInfraError);
  EXPECT_NE(no_reference.failure->message.find("reference output unreadable"), std::string::npos);
  WriteFloats(files_.reference, {0, 1, 2});
  ComparedOutputs no_candidate = CompareOutputs(none, Json::object(), files_, tolerance_);
  ASSERT_TRUE(no_candidate.failure);
  EXPECT_EQ(no_candidate.failure->status, OutcomeStatus::kCrash);
  EXPECT_NE(no_candidate.failure->message.find("candidate output unreadable"), std::string::npos);
}

TEST_F(CompareOutputsTest, DeliveredOutputsAreComparedOnTheDevice) {
  Json call{{"match", true}, {"compared", 3}, {"max_abs", 0.0}, {"max_rel", 0.0}};
  DeviceOffer offer = Offer(Json{{"served", true}, {"calls", {call, call}}});
  int device_done = 0;
  ComparedOutputs got =
      CompareOutputs(offer, Json{{"handoff", "delivered"}}, files_, tolerance_, [&] { ++device_done; });
  ASSERT_FALSE(got.failure) << got.failure->message;
  EXPECT_TRUE(got.on_device);
  ASSERT_EQ(got.calls.size(), 2u);
  EXPECT_EQ(got.calls[1].compared, 3);
  EXPECT_EQ(device_done, 1);
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_EQ(requests_[0]["op"], "handoff_compare");
  EXPECT_FALSE(offer.open());
}

TEST_F(CompareOutputsTest, DeliveredButNeverServedIsTheCandidatesCrash) {
  DeviceOffer offer = Offer(Json{{"served", false}, {"calls", Json::array()}});
  ComparedOutputs got = CompareOutputs(offer, Json{{"handoff", "delivered"}}, files_, tolerance_);
  ASSERT_TRUE(got.failure);
  EXPECT_EQ(got.failure->status, OutcomeStatus::kCrash);
  EXPECT_NE(got.failure->message.find("never handed over"), std::string::npos);
}

TEST_F(CompareOutputsTest, AFailedDeviceComparisonIsInfraError) {
  DeviceOffer offer = Offer(Json{{"served", true}});  // no calls: a malformed answer
  ComparedOutputs got = CompareOutputs(offer, Json{{"handoff", "delivered"}}, files_, tolerance_);
  ASSERT_TRUE(got.failure);
  EXPECT_EQ(got.failure->status, OutcomeStatus::kInfraError);
  EXPECT_NE(got.failure->message.find("comparing on the device"), std::string::npos);
}

// The candidate's worker declined (or forged nothing): the offer is written to the
// reference's file and both are compared from files.
TEST_F(CompareOutputsTest, DeclinedDeliveryFallsBackToFiles) {
  WriteFloats(files_.candidate[0], {0, 1, 2});
  WriteFloats(files_.candidate[1], {0, 1, 2});
  DeviceOffer offer = Offer(Json::object());
  int device_done = 0;
  ComparedOutputs got =
      CompareOutputs(offer, Json{{"handoff", "declined"}}, files_, tolerance_, [&] { ++device_done; });
  ASSERT_FALSE(got.failure) << got.failure->message;
  EXPECT_FALSE(got.on_device);
  ASSERT_EQ(got.calls.size(), 2u);
  EXPECT_TRUE(got.calls[1].match);
  EXPECT_EQ(device_done, 1);
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_EQ(requests_[0]["op"], "handoff_release");
  EXPECT_EQ(requests_[0]["out"], files_.reference);
}

// The reference call's failure keeps the status it was judged (worker_outcome.h).
TEST_F(CompareOutputsTest, AnOfferThatCannotBeWrittenFailsAsItsCallWasJudged) {
  for (OutcomeStatus status : {OutcomeStatus::kTaskError, OutcomeStatus::kInfraError}) {
    DeviceOffer offer = Offer(Json::object(), TrustedFailure{status, "the reference worker could not write"});
    ComparedOutputs got = CompareOutputs(offer, Json::object(), files_, tolerance_);
    ASSERT_TRUE(got.failure);
    EXPECT_EQ(got.failure->status, status);
    EXPECT_NE(got.failure->message.find("could not write"), std::string::npos);
  }
}

}  // namespace
}  // namespace kvault
