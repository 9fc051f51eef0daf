#include "corpus/stats.h"

#include <gtest/gtest.h>

namespace kvault::corpus {
namespace {

KernelRecord Kernel(const std::string& task, const std::string& source, const std::string& status,
                    std::optional<double> speedup, const char* origin = kOriginEngine) {
  KernelRecord r;
  r.task.name = task;
  r.candidate_source = source;
  r.language = "hip";
  r.format = "extension";
  r.provenance.source = "AIG";
  if (!status.empty()) {
    VerificationResult v;
    v.hardware = "MI300X";
    v.status = status;
    v.speedup = speedup;
    v.origin = origin;
    r.results = {v};
  }
  FinishRecord(r);
  return r;
}

TEST(Stats, QuantilesInterpolateBetweenNeighbours) {
  EXPECT_FALSE(Quantile({}, 0.5).has_value());
  EXPECT_DOUBLE_EQ(*Quantile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(*Quantile({1, 2, 3, 4}, 0), 1);
  EXPECT_DOUBLE_EQ(*Quantile({1, 2, 3, 4}, 1), 4);
  EXPECT_DOUBLE_EQ(*Quantile({5}, 0.9), 5);
}

TEST(Stats, CountsByStatusOperationAndSpeedupsOfCorrectKernels) {
  auto vault = CorpusStore::Open(":memory:");
  ASSERT_TRUE(vault.ok());
  ASSERT_TRUE(vault->UpsertMany({Kernel("relu", "a", "passed", 2.0), Kernel("relu", "b", "mismatch", 5.0),
                                 Kernel("gemm", "c", "passed", 1.0), Kernel("gemm", "d", "", std::nullopt)})
                  .ok());
  auto stats = ComputeStats(*vault, {});
  ASSERT_TRUE(stats.ok()) << stats.error();
  EXPECT_EQ(stats->records, 4);
  EXPECT_EQ(stats->by_status.at("passed"), 2);
  EXPECT_EQ(stats->by_status.at("unverified"), 1);
  EXPECT_EQ(stats->by_operation.at("relu"), 2);
  EXPECT_EQ(stats->speedups, (std::vector<double>{1.0, 2.0}));  // the mismatch's 5.0 is not a speedup
  Json j = StatsToJson(*stats);
  EXPECT_DOUBLE_EQ(j["speedup"]["quantiles"]["p50"].get<double>(), 1.5);
  const std::string html = StatsHtml(*stats, "vault.db");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("gemm"), std::string::npos);
}

TEST(Stats, ClaimsAreCountedApartFromVerification) {
  auto vault = CorpusStore::Open(":memory:");
  ASSERT_TRUE(vault.ok());
  ASSERT_TRUE(vault->UpsertMany({Kernel("relu", "a", "passed", 3.7, kOriginImport),
                                 Kernel("relu", "b", "passed", 1.2)}).ok());
  auto stats = ComputeStats(*vault, {});
  ASSERT_TRUE(stats.ok()) << stats.error();
  EXPECT_EQ(stats->by_status.at("passed"), 1);
  EXPECT_EQ(stats->by_status.at("unverified"), 1);  // a claim is no verification
  EXPECT_EQ(stats->by_claimed_status.at("passed"), 2);
  EXPECT_EQ(stats->speedups, (std::vector<double>{1.2}));
  RecordFilter claims;
  claims.count_claims = true;
  EXPECT_EQ(ComputeStats(*vault, claims)->by_status.at("passed"), 2);
}

}  // namespace
}  // namespace kvault::corpus
