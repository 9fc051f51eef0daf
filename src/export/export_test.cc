// The row model and its writers.
#include <gtest/gtest.h>

#include <sstream>

#include "export/rows.h"
#include "export/writers.h"

namespace kvault::exporting {
namespace {

AttemptRecord Record() {
  AttemptRecord r;
  r.id = 7;
  r.run = "r";
  r.task = "level1/19_ReLU";
  r.sample = "level_1_problem_19_sample_0_kernel.py";
  r.status = "mismatch";
  r.compiled = true;
  r.message = "case default, seed 1: \"got\" 2\nexpected 1";
  r.reference_ms = 0.5;
  r.environment = {{"torch", "2.4.0"}, {"device", {{"name", "H200"}}}};
  return r;
}

TEST(AttemptRow, HasEveryColumnAndNothingElse) {
  Json row = AttemptRow(Record(), RunContext{"qwen3-8b"});
  ASSERT_EQ(row.size(), AttemptColumns().size());
  for (const Column& c : AttemptColumns()) EXPECT_TRUE(row.contains(c.name)) << c.name;
  EXPECT_EQ(row["model"], "qwen3-8b");
  EXPECT_EQ(row["device"], "H200");
  EXPECT_EQ(row["torch"], "2.4.0");
  EXPECT_TRUE(row["speedup"].is_null());
  EXPECT_EQ(row["reference_ms"], 0.5);
}

TEST(Writers, JsonlOneObjectPerLineInColumnOrder) {
  std::ostringstream out;
  WriteJsonl(out, AttemptColumns(), {AttemptRow(Record(), {}), AttemptRow(Record(), {})});
  std::istringstream lines(out.str());
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    Json j = Json::parse(line);
    EXPECT_EQ(j["sample"], "level_1_problem_19_sample_0_kernel.py");
    EXPECT_EQ(line.substr(0, 7), "{\"id\":7");
    ++n;
  }
  EXPECT_EQ(n, 2);
}

TEST(Writers, CsvQuotesWhatNeedsIt) {
  std::ostringstream out;
  std::vector<Column> cols = {{"task", ColumnType::kString}, {"message", ColumnType::kString},
                              {"speedup", ColumnType::kDouble, true}, {"correct", ColumnType::kBool},
                              {"cases", ColumnType::kJson}};
  Json row = AttemptRow(Record(), {});
  row["cases"] = Json::array({1, 2});
  WriteCsv(out, cols, {row});
  EXPECT_EQ(out.str(),
            "task,message,speedup,correct,cases\r\n"
            "level1/19_ReLU,\"case default, seed 1: \"\"got\"\" 2\nexpected 1\",,false,\"[1,2]\"\r\n");
}

TEST(Columns, JsonNamesTypes) {
  Json j = ColumnsJson({{"speedup", ColumnType::kDouble, true}});
  EXPECT_EQ(DumpJson(j), "[{\"name\":\"speedup\",\"nullable\":true,\"type\":\"double\"}]");
}

}  // namespace
}  // namespace kvault::exporting
