#include "corpus/decontam.h"

#include <gtest/gtest.h>

#include "corpus/op_signature.h"
#include "util/env.h"
#include "util/files.h"
#include "kvault/build_config.h"

namespace kvault::corpus {
namespace {

std::string Fixture(const std::string& rel) {
  std::string root = GetEnv("KVAULT_SOURCE_ROOT").value_or(KVAULT_DEFAULT_SOURCE_ROOT);
  return root + "/tests/fixtures/corpus_curate/" + rel;
}

std::string Read(const std::string& rel) {
  auto text = ReadFile(Fixture(rel));
  EXPECT_TRUE(text.ok()) << rel;
  return text.ok() ? *text : "";
}

TEST(OpSignature, RenamedAndReorderedTaskHasTheSameSignature) {
  auto task = ReferenceSignature(Read("suite/level2/1_Conv2D_ReLU_BiasAdd.py"));
  auto planted = ReferenceSignature(Read("contaminated_reference.py"));
  ASSERT_TRUE(task && planted);
  EXPECT_EQ(task->ops, (std::vector<std::string>{"Conv2d($0,$1,$2)", "op:+", "relu"}));
  EXPECT_EQ(task->inputs, (std::vector<std::string>{"randn(128,3,32,32)"}));
  EXPECT_EQ(task->init, (std::vector<std::string>{"(3,16,3,(16,1,1))"}));
  EXPECT_EQ(task->key, planted->key);
}

TEST(OpSignature, OtherOpOrOtherShapeDiffers) {
  auto task = ReferenceSignature(Read("suite/level2/1_Conv2D_ReLU_BiasAdd.py"));
  auto clean = ReferenceSignature(Read("clean_reference.py"));
  ASSERT_TRUE(task && clean);
  EXPECT_NE(task->key, clean->key);
  std::string resized = Read("suite/level1/19_ReLU.py");
  resized.replace(resized.find("dim = 16384"), 11, "dim = 8192");
  EXPECT_NE(ReferenceSignature(resized)->key, ReferenceSignature(Read("suite/level1/19_ReLU.py"))->key);
}

TEST(OpSignature, KeywordsChainedAndParenthesizedConstantsAndRandnReadAsTheTask) {
  // A task in KernelBench's habits: keyword arguments named like its constants and
  // parameters, a chained assignment, a tuple of sizes without parentheses, rand.
  const char* task =
      "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
      "    def __init__(self, kernel_size, dim):\n        super().__init__()\n"
      "        self.pool = nn.MaxPool2d(kernel_size=kernel_size, stride=1)\n        self.dim = dim\n\n"
      "    def forward(self, x):\n        return torch.sum(self.pool(x), dim=self.dim)\n\n"
      "batch_size = 16\nheight = width = 64\nchannels, kernel_size = 8, 3\ndim = 1\n\n"
      "def get_inputs():\n    return [torch.rand(batch_size, channels, height, width)]\n\n"
      "def get_init_inputs():\n    return [kernel_size, dim]\n";
  // The same with its names changed, its tuple parenthesized, and inputs from randn.
  const char* copy =
      "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
      "    def __init__(self, k, axis):\n        super().__init__()\n"
      "        self.pool = nn.MaxPool2d(stride=1, kernel_size=k)\n        self.dim = axis\n\n"
      "    def forward(self, inp):\n        return torch.sum(self.pool(inp), dim=self.dim)\n\n"
      "B = 16\nH = W = 64\nC, K = (8, 3)\nD = 1\n\n"
      "def get_inputs():\n    return [torch.randn(B, C, H, W)]\n\n"
      "def get_init_inputs():\n    return [K, D]\n";
  auto a = ReferenceSignature(task), b = ReferenceSignature(copy);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->ops, b->ops);
  EXPECT_EQ(a->inputs, (std::vector<std::string>{"rand(16,8,64,64)"}));
  EXPECT_EQ(b->inputs, (std::vector<std::string>{"randn(16,8,64,64)"}));
  EXPECT_EQ(a->init, b->init);
  EXPECT_NE(a->key, b->key);  // rand is not randn: the exact signature tells them apart
  EXPECT_EQ(a->shape_free_key, b->shape_free_key);
  // Another operation is still another task.
  std::string other = copy;
  other.replace(other.find("torch.sum"), 9, "torch.amax");
  EXPECT_NE(ReferenceSignature(other)->shape_free_key, a->shape_free_key);
}

TEST(OpSignature, NoModelNoSignature) {
  EXPECT_FALSE(ReferenceSignature("import torch\nx = 1\n"));
  EXPECT_FALSE(ReferenceSignature(""));
}

TEST(Decontam, LoadsEverySourceFileOfTheSuite) {
  auto suite = LoadBenchmarkSuite(Fixture("suite"));
  ASSERT_TRUE(suite.ok()) << suite.error();
  ASSERT_EQ(suite->size(), 5u);
  EXPECT_EQ((*suite)[0].name, "level1/19_ReLU");
  EXPECT_EQ((*suite)[0].language, "python");
  EXPECT_FALSE(LoadBenchmarkSuite(Fixture("no-such-folder")).ok());
}

TEST(Decontam, PlantedContaminatedRecordFlaggedCleanOneNot) {
  auto suite = LoadBenchmarkSuite(Fixture("suite"));
  ASSERT_TRUE(suite.ok());
  SuiteIndex index(*suite, DecontamOptions{});
  DecontamItem planted{"p", "__global__ void k(float* a) { a[0] = 1; }", "cuda",
                       Read("contaminated_reference.py")};
  DecontamItem clean{"c", "__global__ void k(float* a) { a[0] = 1; }", "cuda", Read("clean_reference.py")};
  auto hits = Decontaminate({planted, clean}, index, 2);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].item, 0u);
  EXPECT_EQ((*suite)[hits[0].task].name, "level2/1_Conv2D_ReLU_BiasAdd");
  EXPECT_EQ(hits[0].reason, "signature");
}

TEST(Decontam, VerbatimTaskInsideACandidateFlaggedByNgrams) {
  auto suite = LoadBenchmarkSuite(Fixture("suite"));
  ASSERT_TRUE(suite.ok());
  SuiteIndex index(*suite, DecontamOptions{});
  std::string matmul = Read("suite/level1/2_Standard_matrix_multiplication_.py");
  DecontamItem copied{"m", "# a candidate that pasted its task\n" + matmul + "\nclass ModelNew(Model):\n    pass\n",
                      "python", ""};
  auto hits = index.Check(copied);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ((*suite)[hits[0].task].name, "level1/2_Standard_matrix_multiplication_");
  EXPECT_EQ(hits[0].reason, "ngram");
  EXPECT_GE(hits[0].score, 0.99);
}

}  // namespace
}  // namespace kvault::corpus
