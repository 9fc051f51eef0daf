#include "candidate/candidate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "util/files.h"

namespace kvault {
namespace {

class CandidateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = TempDir::Create();
    ASSERT_TRUE(d);
    dir_ = std::make_unique<TempDir>(std::move(*d));
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::string p = dir_->path() + "/" + name;
    EXPECT_TRUE(WriteFileAtomic(p, text));
    return p;
  }
  std::unique_ptr<TempDir> dir_;
};

constexpr char kBinding[] = "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}";

TEST_F(CandidateTest, FormatAndLanguageFollowTheFileName) {
  struct Case { const char* name; const char* language; CandidateFormat format; };
  for (Case c : {Case{"a.hip", "hip", CandidateFormat::kExtension},
                 Case{"a.cu", "cuda", CandidateFormat::kExtension},
                 Case{"a.cpp", "cpp", CandidateFormat::kExtension},
                 Case{"a.cc", "cpp", CandidateFormat::kExtension}}) {
    auto r = LoadCandidate(Write(c.name, kBinding));
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->language, c.language);
    EXPECT_EQ(r->format, c.format);
    EXPECT_EQ(r->hash.size(), 64u);
  }
  auto py = LoadCandidate(Write("b.py", "class ModelNew(nn.Module): pass"));
  ASSERT_TRUE(py);
  EXPECT_EQ(py->format, CandidateFormat::kKernelBench);
}

TEST_F(CandidateTest, UnusableFilesAreParseErrorsWithAReason) {
  auto empty = LoadCandidate(Write("e.cpp", " \n"));
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().find("empty"), std::string::npos);
  auto nobind = LoadCandidate(Write("n.cu", "__global__ void k() {}"));
  ASSERT_FALSE(nobind);
  EXPECT_NE(nobind.error().find("PYBIND11_MODULE"), std::string::npos);
  auto nomodel = LoadCandidate(Write("m.py", "class Model: pass"));
  ASSERT_FALSE(nomodel);
  EXPECT_NE(nomodel.error().find("ModelNew"), std::string::npos);
  auto ext = LoadCandidate(Write("x.rs", "fn main() {}"));
  ASSERT_FALSE(ext);
  EXPECT_NE(ext.error().find(".rs"), std::string::npos);
  EXPECT_FALSE(LoadCandidate(dir_->path() + "/missing.cpp"));
}

TEST_F(CandidateTest, KvaultForwardWithoutBindingIsTheNativeFormat) {
  constexpr char kNative[] =
      "#include <kvault/native.h>\nextern \"C\" int kvault_forward(const kv_tensor* in, int ni,\n"
      "  const kv_scalar* s, int ns, kv_tensor* out, int no, void* stream) { return 0; }\n";
  struct Case { const char* name; const char* language; };
  for (Case c : {Case{"a.cpp", "cpp"}, Case{"a.cu", "cuda"}, Case{"a.hip", "hip"}}) {
    auto r = LoadCandidate(Write(c.name, kNative));
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->format, CandidateFormat::kNative) << c.name;
    EXPECT_EQ(r->language, c.language);
    EXPECT_EQ(ToString(r->format), "native");
  }
  // A binding decides: a source with both is the extension format, as it always was.
  auto both = LoadCandidate(Write("both.cpp", std::string(kNative) + kBinding));
  ASSERT_TRUE(both);
  EXPECT_EQ(both->format, CandidateFormat::kExtension);
  // Neither: the message names what each format needs.
  auto neither = LoadCandidate(Write("neither.cpp", "int forward() { return 0; }"));
  ASSERT_FALSE(neither);
  EXPECT_NE(neither.error().find("kvault_forward"), std::string::npos);
  EXPECT_NE(neither.error().find("PYBIND11_MODULE"), std::string::npos);
  // A .py file is never native.
  EXPECT_FALSE(LoadCandidate(Write("n.py", "kvault_forward = 1")));
}

TEST_F(CandidateTest, MatchesByStemWithLabels) {
  Write("relu.hip", kBinding);
  Write("relu.2.hip", kBinding);
  Write("relu.wrong-abs.cpp", kBinding);
  Write("softmax.cu", kBinding);
  Write("notes.txt", "ignored");
  Write("gelu.hip", kBinding);
  std::vector<std::string> unmatched;
  auto m = MatchCandidates(dir_->path(), {"relu", "softmax"}, &unmatched);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->size(), 4u);
  for (const auto& c : *m) EXPECT_TRUE(c.task == "relu" || c.task == "softmax");
  ASSERT_EQ(unmatched.size(), 2u);  // each named, with why
  std::sort(unmatched.begin(), unmatched.end());
  EXPECT_NE(unmatched[0].find("gelu.hip (no task named gelu"), std::string::npos) << unmatched[0];
  EXPECT_NE(unmatched[1].find("notes.txt (not a candidate file"), std::string::npos) << unmatched[1];
}

// KernelBench's layout: tasks in level folders, samples named by level, problem and
// sample number, or candidates in matching level folders; samples in numbered order.
TEST_F(CandidateTest, MatchesKernelBenchSampleNamesAndLevelFolders) {
  Write("level_1_problem_19_sample_10_kernel.py", "class ModelNew: pass");
  Write("level_1_problem_19_sample_2_kernel.py", "class ModelNew: pass");
  Write("level_2_problem_19_sample_0_kernel.py", "class ModelNew: pass");
  Write("level_1_problem_7_sample_0_kernel.py", "class ModelNew: pass");
  ASSERT_TRUE(std::filesystem::create_directories(dir_->path() + "/level2"));
  Write("level2/3_Conv.cu", kBinding);
  std::vector<std::string> unmatched;
  auto m = MatchCandidates(dir_->path(), {"level1/19_ReLU", "level2/19_Conv_Add", "level2/3_Conv"}, &unmatched);
  ASSERT_TRUE(m) << m.error();
  ASSERT_EQ(m->size(), 4u);
  EXPECT_EQ((*m)[0].task, "level1/19_ReLU");
  EXPECT_NE((*m)[0].path.find("sample_2_"), std::string::npos);  // 2 before 10
  EXPECT_EQ((*m)[1].task, "level1/19_ReLU");
  EXPECT_EQ((*m)[2].task, "level2/3_Conv");  // by task, numbers as numbers
  EXPECT_EQ((*m)[3].task, "level2/19_Conv_Add");
  ASSERT_EQ(unmatched.size(), 1u);
  EXPECT_NE(unmatched[0].find("no task level1/7_*"), std::string::npos) << unmatched[0];
  auto n = ParseKernelBenchSampleName("level_3_problem_40_sample_12_kernel.cu");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->level * 10000 + n->problem * 100 + n->sample, 34012);
  EXPECT_FALSE(ParseKernelBenchSampleName("level_3_problem_40_sample_12_kernel"));
  EXPECT_FALSE(ParseKernelBenchSampleName("relu.cu"));
}

TEST_F(CandidateTest, FromSourceDecidesLikeLoadCandidate) {
  for (auto [name, text] : {std::pair{"a.hip", std::string(kBinding)}, std::pair{"b.py", std::string("class ModelNew: pass")},
                            std::pair{"c.txt", std::string(kBinding)}, std::pair{"d.cu", std::string("int x;")},
                            std::pair{"e.cpp", std::string(" \n\t")}}) {
    const std::string path = Write(name, text);
    auto loaded = LoadCandidate(path);
    auto direct = CandidateFromSource(path, text);
    ASSERT_EQ(bool(loaded), bool(direct)) << name;
    if (!loaded) {
      EXPECT_EQ(loaded.error(), direct.error());
      continue;
    }
    EXPECT_EQ(loaded->path, direct->path);
    EXPECT_EQ(loaded->source, direct->source);
    EXPECT_EQ(loaded->format, direct->format);
    EXPECT_EQ(loaded->language, direct->language);
    EXPECT_EQ(loaded->hash, direct->hash);
  }
}

TEST_F(CandidateTest, FromSourceReadsNothing) {
  auto c = CandidateFromSource("/no/such/dir/k.cu", kBinding);
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->path, "/no/such/dir/k.cu");
  EXPECT_EQ(c->language, "cuda");
}

TEST_F(CandidateTest, TritonFilesNeedAJitKernelAndAnEntry) {
  constexpr char kKernel[] = "import triton\nimport triton.language as tl\n@triton.jit\ndef k(x): pass\n";
  auto model_new = LoadCandidate(Write("a.py", std::string(kKernel) + "class ModelNew: pass\n"));
  ASSERT_TRUE(model_new) << model_new.error();
  EXPECT_EQ(model_new->format, CandidateFormat::kTriton);
  EXPECT_EQ(model_new->language, "triton");
  EXPECT_EQ(ToString(model_new->format), "triton");
  auto fn = LoadCandidate(Write("b.py", std::string(kKernel) + "def module_fn(x): return x\n"));
  ASSERT_TRUE(fn) << fn.error();
  EXPECT_EQ(fn->format, CandidateFormat::kTriton);
  auto no_entry = LoadCandidate(Write("c.py", kKernel));
  ASSERT_FALSE(no_entry);
  EXPECT_NE(no_entry.error().find("module_fn"), std::string::npos);
  // Mentioning triton without a jit kernel keeps the KernelBench format.
  auto plain = LoadCandidate(Write("d.py", "import triton\nclass ModelNew: pass\n"));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->format, CandidateFormat::kKernelBench);
}

}  // namespace
}  // namespace kvault
