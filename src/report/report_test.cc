// The report is one self-contained HTML page with every section.
#include "report/report.h"

#include <gtest/gtest.h>

#include <regex>

#include "report/svg.h"

namespace kvault::report {
namespace {

AttemptRecord Rec(int64_t id, const std::string& task, const std::string& status, std::optional<double> s = {}) {
  AttemptRecord r;
  r.id = id;
  r.task = task;
  r.status = status;
  r.correct = status == "passed";
  r.speedup = s;
  r.candidate_path = "/c/" + task + "<x>.py";
  return r;
}

ReportRun Run(const std::string& name, std::vector<AttemptRecord> recs) {
  ReportRun r{name, std::move(recs), {}};
  r.samples = score::GroupByTask(r.records, {"a", "b", "c"}, {});
  return r;
}

std::vector<ReportRun> TwoRuns() {
  return {Run("one", {Rec(1, "a", "passed", 1.5), Rec(2, "a", "mismatch"), Rec(3, "b", "compile_error"),
                      Rec(4, "c", "infra_error")}),
          Run("two", {Rec(1, "a", "passed", 3.0), Rec(2, "b", "passed", 0.4), Rec(3, "c", "timeout")})};
}

TEST(Report, SelfContained) {
  std::string html = BuildReport(TwoRuns(), ReportOptions{});
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("//"), std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex(R"(\b(src|href)\s*=)", std::regex::icase)));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
}

TEST(Report, HasEverySection) {
  std::string html = BuildReport(TwoRuns(), ReportOptions{});
  for (const char* id : {"summary", "pass-at-k", "speedups", "failures", "why", "environment", "categories",
                         "compare", "grid"})
    EXPECT_NE(html.find("<section id=\"" + std::string(id) + "\">"), std::string::npos) << id;
  EXPECT_NE(html.find("<polyline"), std::string::npos);  // the pass@k curve
  EXPECT_NE(html.find("pass@1"), std::string::npos);
  EXPECT_NE(html.find("fast_1.5"), std::string::npos);
  // One run: no comparison section.
  std::string one = BuildReport({TwoRuns()[0]}, ReportOptions{});
  EXPECT_EQ(one.find("id=\"compare\""), std::string::npos);
}

TEST(Report, EscapesNames) {
  std::string html = BuildReport(TwoRuns(), ReportOptions{});
  EXPECT_EQ(html.find("<x>"), std::string::npos);
  EXPECT_NE(html.find("&lt;x&gt;"), std::string::npos);
  EXPECT_EQ(Escape("a&\"'"), "a&amp;&quot;&#39;");
}

TEST(Report, GridHasOneRowPerTaskAndCellPerAttempt) {
  std::string grid = OutcomeGrid(TwoRuns()[0]);
  auto count = [&](const std::string& s) {
    size_t n = 0;
    for (size_t p = grid.find(s); p != std::string::npos; p = grid.find(s, p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("<td class=\"task\">"), 3u);
  EXPECT_EQ(count("class=\"cell\""), 4u);
  EXPECT_NE(grid.find(StatusColor("passed")), std::string::npos);
}

// Why each candidate failed is on the page: in the failure table and in the grid's
// hover text; the comparison names its runs in both pass@1 columns.
TEST(Report, SaysWhyCandidatesFailedAndNamesCompareColumns) {
  std::vector<ReportRun> runs = TwoRuns();
  for (AttemptRecord& r : runs[0].records)
    if (!r.correct) r.message = "case default seed 1: 12 of 40 elements differ";
  runs[0].model = "qwen3-8b";
  std::string html = BuildReport(runs, ReportOptions{});
  const size_t why = html.find("<section id=\"why\">");
  ASSERT_NE(why, std::string::npos);
  EXPECT_NE(html.find("12 of 40 elements differ", why), std::string::npos);
  EXPECT_NE(OutcomeGrid(runs[0]).find("title=\"mismatch"), std::string::npos);
  EXPECT_NE(OutcomeGrid(runs[0]).find("12 of 40 elements differ"), std::string::npos);
  EXPECT_NE(html.find("qwen3-8b", html.find("<section id=\"environment\">")), std::string::npos);
  EXPECT_NE(html.find("<th>pass@1 " + Escape(runs[0].name) + "</th>"), std::string::npos);
}

TEST(Report, EmptyRunStillRenders) {
  ReportRun r{"empty", {}, score::GroupByTask({}, {"a"}, {})};
  std::string html = BuildReport({r}, ReportOptions{});
  EXPECT_NE(html.find("No correct attempt has a speedup"), std::string::npos);
}

}  // namespace
}  // namespace kvault::report
