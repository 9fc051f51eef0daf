// The comparisons of timed samples' outputs on threads of their own.
#include "engine/sample_comparisons.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <tuple>

#include "check/testing/tensor_file_writer.h"
#include "util/files.h"
#include "util/sha256.h"

namespace kvault {
namespace {

std::shared_ptr<const TensorFile> Reference(std::vector<float> values) {
  testing::TensorFileWriter w;
  w.Add<float>({static_cast<int64_t>(values.size())}, values);
  auto file = TensorFile::FromBytes(w.Bytes(), "reference");
  EXPECT_TRUE(file) << file.error();
  return std::make_shared<const TensorFile>(std::move(*file));
}

std::string Candidate(std::vector<float> values) {
  testing::TensorFileWriter w;
  w.Add<float>({static_cast<int64_t>(values.size())}, values);
  return w.Bytes();
}

// A job whose file holds what the worker said it wrote there.
SampleComparisons::Job Job(int side, int round, int index, std::shared_ptr<const TensorFile> ref, std::string bytes) {
  static auto dir = TempDir::Create();
  const std::string path = dir->Join(std::to_string(side) + "_" + std::to_string(round) + "_" + std::to_string(index));
  EXPECT_TRUE(WriteFileAtomic(path, bytes));
  return {.side = side, .round = round, .index = index, .reference = std::move(ref), .candidate = path,
          .most_bytes = 1 << 30, .sha256 = Sha256Hex(bytes)};
}

TEST(SampleComparisonsTest, EveryJobIsComparedAndCollectedInOrder) {
  SampleComparisons cmp(Tolerance{}, 3);
  auto ref = Reference({1, 2, 3});
  for (int round = 1; round >= 0; --round)
    for (int index = 4; index >= 0; --index)
      for (int side = 2; side >= 1; --side)
        cmp.Add(Job(side, round, index, ref,
                    Candidate(side == 2 && round == 1 && index == 3 ? std::vector<float>{1, 2, 4}
                                                                      : std::vector<float>{1, 2, 3})));
  std::vector<SampleComparisons::Done> done = cmp.Collect(/*wait=*/true);
  ASSERT_EQ(done.size(), 20u);
  for (size_t k = 1; k < done.size(); ++k)
    EXPECT_LT(std::tie(done[k - 1].side, done[k - 1].round, done[k - 1].index),
              std::tie(done[k].side, done[k].round, done[k].index));
  int mismatched = 0;
  for (const auto& d : done) {
    ASSERT_TRUE(d.report) << d.report.error();
    if (!d.report->match) {
      ++mismatched;
      EXPECT_EQ(std::make_tuple(d.side, d.round, d.index), std::make_tuple(2, 1, 3));
    }
  }
  EXPECT_EQ(mismatched, 1);
  EXPECT_TRUE(cmp.Collect(/*wait=*/true).empty());  // each outcome once
}

TEST(SampleComparisonsTest, BytesThatAreNoTensorFileAreSaidSo) {
  SampleComparisons cmp(Tolerance{}, 1);
  cmp.Add(Job(1, 0, 0, Reference({1}), "not a tensor file"));
  auto missing = Job(1, 0, 1, Reference({1}), Candidate({1}));
  std::filesystem::remove(missing.candidate);
  cmp.Add(std::move(missing));
  auto large = Job(1, 0, 2, Reference({1}), Candidate(std::vector<float>(1024, 1.0f)));
  large.most_bytes = 1024;  // four times that is no output of the reference's size
  const std::string large_path = large.candidate;
  cmp.Add(std::move(large));
  auto done = cmp.Collect(/*wait=*/true);
  ASSERT_EQ(done.size(), 3u);
  for (const auto& d : done) ASSERT_FALSE(d.report) << d.index;
  EXPECT_NE(done[0].report.error().find("the candidate's output of a timed sample"), std::string::npos)
      << done[0].report.error();
  EXPECT_NE(done[2].report.error().find("more than the 1024"), std::string::npos) << done[2].report.error();
  EXPECT_FALSE(std::filesystem::exists(large_path));  // read or not, the file is gone
}

// Bytes that differ from what the worker wrote are not compared: they were changed after.
TEST(SampleComparisonsTest, BytesOtherThanTheWorkerWroteAreAltered) {
  SampleComparisons cmp(Tolerance{}, 1);
  auto job = Job(1, 0, 0, Reference({1, 2, 3}), Candidate({1, 2, 3}));
  job.sha256 = Sha256Hex(Candidate({1, 2, 4}));  // it wrote a wrong output; this is put right
  cmp.Add(std::move(job));
  auto done = cmp.Collect(/*wait=*/true);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].altered);
}

TEST(SampleComparisonsTest, JobsNotStartedAreDroppedWithTheirFiles) {
  std::vector<std::string> paths;
  {
    SampleComparisons cmp(Tolerance{}, 1);
    auto ref = Reference(std::vector<float>(1 << 16, 1.0f));
    for (int i = 0; i < 16; ++i) {
      auto job = Job(3, 1, i, ref, Candidate(std::vector<float>(1 << 16, 1.0f)));
      paths.push_back(job.candidate);
      cmp.Add(std::move(job));
    }
  }  // a turn that ended early
  for (const std::string& p : paths) EXPECT_FALSE(std::filesystem::exists(p)) << p;
}

TEST(SampleComparisonsTest, OneThreadOnTheCpuAndAFewOnAGpuHost) {
  EXPECT_EQ(SampleComparisons::ThreadsFor(Backend::kCpu), 1);
  const int gpu = SampleComparisons::ThreadsFor(Backend::kCuda);
  EXPECT_GE(gpu, 1);
  EXPECT_LE(gpu, 4);
}

}  // namespace
}  // namespace kvault
