#include "agent/feedback.h"

#include <gtest/gtest.h>

namespace kvault::agent {
namespace {

TEST(Truncate, KeepsShortTextAndCutsLongTextWithinLimit) {
  EXPECT_EQ(Truncate("short", 10), "short");
  std::string long_text(5000, 'a');
  long_text += "TAIL";
  const std::string cut = Truncate("HEAD" + long_text, 200);
  EXPECT_LE(cut.size(), 200u);
  EXPECT_EQ(cut.substr(0, 4), "HEAD");
  EXPECT_EQ(cut.substr(cut.size() - 4), "TAIL");
  EXPECT_NE(cut.find("characters cut"), std::string::npos);
}

TEST(Truncate, NeverSplitsUtf8) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "\xC3\xA9";  // é
  const std::string cut = Truncate(text, 101);
  EXPECT_LE(cut.size(), 101u);
  for (size_t i = 0; i + 1 < cut.size(); ++i)
    if (static_cast<unsigned char>(cut[i]) == 0xC3) {
      EXPECT_EQ(static_cast<unsigned char>(cut[i + 1]), 0xA9);
    }
}

TEST(FormatFeedback, CompileErrorCarriesBoundedDiagnostics) {
  AttemptRecord a;
  a.status = "compile_error";
  a.message = "the compiler rejected the source";
  a.diagnostics = "relu.cpp:3: error: expected ';'\n" + std::string(20000, 'x');
  FeedbackLimits limits;
  limits.total = 2000;
  limits.diagnostics = 500;
  const std::string f = FormatFeedback(a, limits);
  EXPECT_LE(f.size(), 2000u);
  EXPECT_NE(f.find("<execution_result>"), std::string::npos);
  EXPECT_NE(f.find("\"status\":\"compile_error\""), std::string::npos);
  EXPECT_NE(f.find("expected ';'"), std::string::npos);
}

TEST(FormatFeedback, MismatchListsFailingCasesOnly) {
  AttemptRecord a;
  a.status = "mismatch";
  a.compiled = true;
  a.message = "odd/seed 1: values differ";
  a.cases = Json::array({{{"case", "default"}, {"seed", 1}, {"status", "ok"}},
                         {{"case", "odd"}, {"seed", 1}, {"status", "mismatch"}, {"max_abs_error", 0.5},
                          {"worst_index", Json::array({3, 4})}}});
  const std::string f = FormatFeedback(a, FeedbackLimits{});
  EXPECT_NE(f.find("\"case\":\"odd\""), std::string::npos) << f;
  EXPECT_EQ(f.find("\"case\":\"default\""), std::string::npos) << f;
  EXPECT_NE(f.find("max_abs_error"), std::string::npos);
}

TEST(FormatFeedback, ManyCasesAreCapped) {
  AttemptRecord a;
  a.status = "mismatch";
  for (int i = 0; i < 50; ++i) a.cases.push_back({{"case", "c" + std::to_string(i)}, {"status", "mismatch"}});
  FeedbackLimits limits;
  limits.max_cases = 3;
  const std::string f = FormatFeedback(a, limits);
  EXPECT_NE(f.find("\"c2\""), std::string::npos);
  EXPECT_EQ(f.find("\"c3\""), std::string::npos);
}

// Timed cases are listed by their medians; re-check and phases records are not cases.
TEST(FormatFeedback, TimedCasesListTheirMedians) {
  AttemptRecord a;
  a.status = "passed";
  a.cases = Json::array({{{"kind", "timing"}, {"case", "big"}, {"reference_ms", 2.0}, {"candidate_ms", 1.0},
                          {"speedup", 2.0}, {"method", "cuda_events"}},
                         {{"kind", "recheck"}, {"bound", 5.0}, {"speedup_before", 9.0}, {"failed", "x"}},
                         {{"kind", "phases"}, {"seconds", {{"build", 1.0}}}}});
  const std::string f = FormatFeedback(a, FeedbackLimits{});
  EXPECT_NE(f.find(R"({"candidate_ms":1.0,"case":"big","reference_ms":2.0,"speedup":2.0})"), std::string::npos) << f;
  EXPECT_EQ(f.find("bound"), std::string::npos) << f;
  EXPECT_EQ(f.find("seconds"), std::string::npos) << f;
}

TEST(FormatNoCode, NamesTheReason) {
  EXPECT_NE(FormatNoCode("2 code blocks", FeedbackLimits{}).find("2 code blocks"), std::string::npos);
}

}  // namespace
}  // namespace kvault::agent
