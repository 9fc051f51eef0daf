#include "candidate/candidate.h"

#include <gtest/gtest.h>

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
  ASSERT_EQ(unmatched.size(), 1u);
  EXPECT_NE(unmatched[0].find("gelu.hip"), std::string::npos);
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

}  // namespace
}  // namespace kvault
