#include "corpus/dedup.h"

#include <gtest/gtest.h>

#include <map>

#include "corpus/record.h"

namespace kvault::corpus {
namespace {

// A row softmax long enough that one changed constant keeps most shingles.
constexpr const char* kSoftmax = R"(
#include <torch/extension.h>
__global__ void softmax_rows(const float* x, float* y, int rows, int cols) {
  int row = blockIdx.x;
  if (row >= rows) return;
  const float* in = x + row * cols;
  float* out = y + row * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, in[c]);
  __shared__ float red[256];
  red[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(in[c] - m);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  sum = red[0];
  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(in[c] - m) / sum;
}
torch::Tensor forward(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int rows = x.size(0), cols = x.size(1);
  softmax_rows<<<rows, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
  return y;
}
)";

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

constexpr const char* kGelu = R"(
#include <torch/extension.h>
__global__ void gelu(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
}
torch::Tensor forward(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  gelu<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
)";

DedupItem Item(std::string id, std::string source, VerifiedRank rank = {}) {
  return {std::move(id), std::move(source), "cuda", rank, ""};  // one group
}

TEST(Dedup, PlantedExactAndNearDuplicatesFoundDifferentKernelKept) {
  std::string renamed = Replace(Replace(kSoftmax, "sum", "total"), "red[", "scratch[");
  std::string near = Replace(kSoftmax, "__shared__ float red[256];", "__shared__ float red[512];");
  near = Replace(near, "rows, 256>>>", "rows, 512>>>");
  std::vector<DedupItem> items = {
      Item("a-original", kSoftmax, {2, 0, 1}),
      Item("b-renamed", renamed, {3, 1.5, 1}),  // passed: the kept one
      Item("c-near", near, {3, 1.2, 1}),
      Item("d-gelu", kGelu, {3, 2.0, 1}),
  };
  DedupResult r = Deduplicate(items, DedupOptions{.threads = 2});
  ASSERT_EQ(r.duplicates.size(), 2u);
  EXPECT_EQ(r.duplicates[0].item, 0u);
  EXPECT_EQ(r.duplicates[0].kept, 1u);
  EXPECT_EQ(r.duplicates[0].kind, DuplicateKind::kExact);
  EXPECT_EQ(r.duplicates[1].item, 2u);
  EXPECT_EQ(r.duplicates[1].kept, 1u);
  EXPECT_EQ(r.duplicates[1].kind, DuplicateKind::kNear);
  EXPECT_EQ(r.stats.clusters, 1u);
  EXPECT_EQ(r.stats.exact_duplicates, 1u);
  EXPECT_EQ(r.stats.near_duplicates, 1u);
}

DedupItem Grouped(std::string id, std::string source, std::string group, VerifiedRank rank) {
  return {std::move(id), std::move(source), "cuda", rank, std::move(group)};
}

TEST(Dedup, NearMissNegativesStayLinkedToTheirPositive) {
  // An off-by-one bound and a wrong initial value: near the correct kernel, and wrong.
  std::string off_by_one = Replace(kSoftmax, "c < cols", "c <= cols");
  std::string wrong_init = Replace(kSoftmax, "float sum = 0.0f;", "float sum = 1.0f;");
  ASSERT_NE(off_by_one, kSoftmax);
  ASSERT_NE(wrong_init, kSoftmax);
  std::string copy = Replace(kSoftmax, "sum", "total");  // renamed: an exact duplicate
  std::vector<DedupItem> items = {
      Grouped("a-correct", kSoftmax, "softmax", {3, 1.5, 1}),
      Grouped("b-off-by-one", off_by_one, "softmax", {2, 0, 1}),
      Grouped("c-wrong-init", wrong_init, "softmax", {2, 0, 1}),
      Grouped("d-copy-failed", copy, "softmax", {2, 0, 1}),
  };
  DedupResult r = Deduplicate(items, DedupOptions{.threads = 2});
  std::map<size_t, DuplicateOf> marks;
  for (const DuplicateOf& d : r.duplicates) marks[d.item] = d;
  ASSERT_EQ(marks.count(3), 1u);  // exact duplicates collapse, whatever their results
  EXPECT_EQ(marks[3].kind, DuplicateKind::kExact);
  EXPECT_EQ(marks[3].kept, 0u);
  for (size_t wrong : {1u, 2u}) {
    ASSERT_EQ(marks.count(wrong), 1u) << wrong;
    EXPECT_EQ(marks[wrong].kind, DuplicateKind::kNearMiss) << wrong;
    EXPECT_EQ(marks[wrong].kept, 0u) << wrong;
  }
  EXPECT_EQ(r.stats.near_misses, 2u);
  EXPECT_EQ(r.stats.near_duplicates, 0u);
}

TEST(Dedup, AWrongCallOrConstantIsANearMissNotAnExactCopy) {
  // The wrong kernels differ from the correct one in a name they use but do not
  // declare (another math function, another limit macro): not renamed away, so each
  // is a negative linked to its positive, never collapsed into it.
  std::string wrong_call = Replace(kSoftmax, "sum += expf(", "sum += exp2f(");
  std::string wrong_init = Replace(kSoftmax, "float m = -INFINITY;", "float m = -FLT_MIN;");
  std::string guarded = Replace(kSoftmax, "float m = -INFINITY;", "float m = -FLT_MAX;");
  std::string guarded_wrong = Replace(kSoftmax, "float m = -INFINITY;", "float m = FLT_MIN;");
  std::vector<DedupItem> items = {
      Grouped("a-correct", kSoftmax, "softmax", {3, 1.5, 1}),
      Grouped("b-wrong-call", wrong_call, "softmax", {2, 0, 1}),
      Grouped("c-wrong-init", wrong_init, "softmax", {2, 0, 1}),
  };
  DedupResult r = Deduplicate(items, DedupOptions{.threads = 2});
  EXPECT_NE(r.keys[0], r.keys[1]);
  EXPECT_NE(r.keys[0], r.keys[2]);
  ASSERT_EQ(r.duplicates.size(), 2u);
  for (const DuplicateOf& d : r.duplicates) {
    EXPECT_EQ(d.kind, DuplicateKind::kNearMiss) << d.item;
    EXPECT_EQ(d.kept, 0u) << d.item;
  }
  EXPECT_EQ(r.stats.exact_duplicates, 0u);
  EXPECT_NE(Deduplicate({Item("a", guarded), Item("b", guarded_wrong)}, {}).keys[0],
            Deduplicate({Item("a", guarded), Item("b", guarded_wrong)}, {}).keys[1]);
}

// A loop scan, short: one changed token leaves an estimated Jaccard near 0.9.
constexpr const char* kScan = R"(
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, values):
        out = torch.zeros_like(values)
        acc = torch.zeros(values.shape[0])
        for i in range(values.shape[1]):
            acc = acc + values[:, i]
            out[:, i] = acc
        return out
)";

TEST(Dedup, PythonStatementOutOfItsLoopIsANearMissNotACopy) {
  // The store left the loop: the same tokens as the correct kernel but for its blocks,
  // and wrong. It is a negative, never an exact copy.
  std::string dedented = Replace(kScan, "            out[:, i] = acc", "        out[:, i] = acc");
  ASSERT_NE(dedented, kScan);
  std::vector<DedupItem> items = {{"a-correct", kScan, "python", {3, 1.1, 1}, "scan"},
                                  {"b-dedented", dedented, "python", {2, 0, 1}, "scan"}};
  DedupResult r = Deduplicate(items, DedupOptions{.threads = 1});
  ASSERT_EQ(r.duplicates.size(), 1u);
  EXPECT_EQ(r.duplicates[0].item, 1u);
  EXPECT_EQ(r.duplicates[0].kind, DuplicateKind::kNearMiss);
  EXPECT_EQ(r.duplicates[0].kept, 0u);
}

TEST(Dedup, EveryNearMissOfASmallTaskIsFoundNotOnlyThoseLshProposes) {
  // Forty wrong scans, each starting at another column: near the correct one, where
  // banding alone misses a few of the forty pairs (3 with these signatures); every
  // one is a near miss, none a duplicate of another wrong one.
  std::vector<DedupItem> items = {{"correct", kScan, "python", {3, 1.1, 1}, "scan"}};
  for (int k = 2; k < 42; ++k)
    items.push_back({"wrong" + std::to_string(k),
                     Replace(kScan, "range(values.shape[1])", "range(" + std::to_string(k) + ", values.shape[1])"),
                     "python", {2, 0, 1}, "scan"});
  DedupResult r = Deduplicate(items, DedupOptions{.threads = 1});
  EXPECT_EQ(r.stats.near_misses, 40u);
  EXPECT_EQ(r.stats.near_duplicates, 0u);
  EXPECT_GT(r.stats.near_miss_pairs_compared, 0u);
  for (const DuplicateOf& d : r.duplicates) {
    EXPECT_EQ(d.kind, DuplicateKind::kNearMiss) << items[d.item].id;
    EXPECT_EQ(d.kept, 0u) << items[d.item].id;
  }
}

TEST(Dedup, AnUnverifiedKernelIsNoNearMissButANearDuplicate) {
  // Without a verdict a kernel is no negative: near a passed one it is a near
  // duplicate (the passed one kept), as a wrong one near it is a near miss.
  std::string other = Replace(kScan, "range(values.shape[1])", "range(3, values.shape[1])");
  std::vector<DedupItem> items = {{"a-correct", kScan, "python", {3, 1.1, 1}, "scan"},
                                  {"b-unverified", other, "python", {}, "scan"}};
  DedupResult r = Deduplicate(items, DedupOptions{.threads = 1});
  ASSERT_EQ(r.duplicates.size(), 1u);
  EXPECT_EQ(r.duplicates[0].item, 1u);
  EXPECT_EQ(r.duplicates[0].kind, DuplicateKind::kNear);
  items[1].rank = {2, 0, 1};  // ran and failed: a near miss
  r = Deduplicate(items, DedupOptions{.threads = 1});
  ASSERT_EQ(r.duplicates.size(), 1u);
  EXPECT_EQ(r.duplicates[0].kind, DuplicateKind::kNearMiss);
}

TEST(Dedup, KernelsOfOtherTasksAreNeverDuplicates) {
  std::vector<DedupItem> items = {Grouped("a", kSoftmax, "softmax", {3, 1, 1}),
                                  Grouped("b", kSoftmax, "scale", {3, 1, 1}),
                                  Grouped("c", kSoftmax, "softmax", {3, 1, 1})};
  DedupResult r = Deduplicate(items, DedupOptions{.threads = 1});
  ASSERT_EQ(r.duplicates.size(), 1u);
  EXPECT_EQ(r.duplicates[0].item, 2u);
  EXPECT_EQ(r.duplicates[0].kept, 0u);
}

TEST(Dedup, ExactOnlyLeavesNearDuplicatesAlone) {
  std::string near = Replace(kSoftmax, "red[256]", "red[512]");
  std::vector<DedupItem> items = {Item("a", kSoftmax), Item("b", near), Item("c", kSoftmax)};
  DedupResult r = Deduplicate(items, DedupOptions{.near = false});
  ASSERT_EQ(r.duplicates.size(), 1u);
  EXPECT_EQ(r.duplicates[0].item, 2u);  // equal rank: the smaller id is kept
  EXPECT_EQ(r.duplicates[0].kept, 0u);
}

TEST(Dedup, HighThresholdSeparatesWhatLowThresholdJoins) {
  std::string edited = Replace(Replace(kSoftmax, "expf(in[c] - m) / sum", "in[c] * sum"),
                               "fmaxf(m, in[c])", "m + in[c]");
  std::vector<DedupItem> items = {Item("a", kSoftmax), Item("b", edited)};
  EXPECT_EQ(Deduplicate(items, DedupOptions{.threshold = 0.97}).duplicates.size(), 0u);
  EXPECT_EQ(Deduplicate(items, DedupOptions{.threshold = 0.5}).duplicates.size(), 1u);
}

TEST(Dedup, RankOrdersPassedThenSpeedupThenResults) {
  KernelRecord r;
  EXPECT_EQ(RankOf(r).status_class, 0);
  VerificationResult failed;
  failed.status = "compile_error";
  r.results.push_back(failed);
  EXPECT_EQ(RankOf(r).status_class, 1);
  VerificationResult ran;
  ran.status = "mismatch";
  r.results.push_back(ran);
  EXPECT_EQ(RankOf(r).status_class, 2);
  VerificationResult passed;
  passed.status = "passed";
  passed.speedup = 1.7;
  r.results.push_back(passed);
  VerifiedRank rank = RankOf(r);
  EXPECT_EQ(rank.status_class, 3);
  EXPECT_DOUBLE_EQ(rank.speedup, 1.7);
  EXPECT_EQ(rank.results, 3);
  EXPECT_GT(rank, (VerifiedRank{3, 1.5, 9}));
  // The engine's verdict outranks any claim.
  passed.origin = kOriginEngine;
  passed.speedup = 1.1;
  KernelRecord verified;
  verified.results = {passed};
  EXPECT_GT(RankOf(verified), rank);
}

}  // namespace
}  // namespace kvault::corpus
