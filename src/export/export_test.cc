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

TEST(AttemptFromRow, GivesBackTheRecordOfItsRow) {
  AttemptRecord in = Record();
  in.speedup = 1.5;
  in.cases = Json::array({{{"case", "default"}}});
  auto out = AttemptFromRow(AttemptRow(in, RunContext{"m"}));
  ASSERT_TRUE(out) << out.error();
  EXPECT_EQ(out->run, in.run);
  EXPECT_EQ(out->sample, in.sample);
  EXPECT_EQ(out->status, in.status);
  EXPECT_EQ(out->message, in.message);
  EXPECT_TRUE(out->compiled);
  EXPECT_EQ(out->speedup, 1.5);
  EXPECT_EQ(out->reference_ms, 0.5);
  EXPECT_FALSE(out->reward.has_value());
  EXPECT_EQ(out->cases, in.cases);
  EXPECT_EQ(out->environment, in.environment);
}

TEST(AttemptFromRow, NamesAMissingOrMistypedColumn) {
  Json row = AttemptRow(Record(), {});
  row.erase("status");
  auto missing = AttemptFromRow(row);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("'status'"), std::string::npos) << missing.error();
  row = AttemptRow(Record(), {});
  row["compiled"] = "yes";
  auto mistyped = AttemptFromRow(row);
  ASSERT_FALSE(mistyped);
  EXPECT_NE(mistyped.error().find("'compiled'"), std::string::npos) << mistyped.error();
  EXPECT_FALSE(AttemptFromRow(Json::array()));
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
