#include "task/task_file.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "util/files.h"

namespace kvault {
namespace {

TEST(TaskFileTest, SuiteListsPythonFilesSortedSkippingPrivateOnes) {
  auto d = TempDir::Create();
  ASSERT_TRUE(d);
  for (const char* n : {"b.py", "a.py", "_helper.py", "notes.md"})
    ASSERT_TRUE(WriteFileAtomic(d->path() + "/" + n, "x = 1\n"));
  auto suite = DiscoverSuite(d->path());
  ASSERT_TRUE(suite) << suite.error();
  ASSERT_EQ(suite->size(), 2u);
  EXPECT_EQ((*suite)[0].name, "a");
  EXPECT_EQ((*suite)[1].name, "b");
  EXPECT_EQ((*suite)[0].hash, (*suite)[1].hash);  // same content
}

// KernelBench's layout: no task at the top, tasks in level folders.
TEST(TaskFileTest, SuiteOfLevelFoldersNamesTasksByFolder) {
  auto d = TempDir::Create();
  ASSERT_TRUE(d);
  ASSERT_TRUE(std::filesystem::create_directories(d->path() + "/level1"));
  ASSERT_TRUE(std::filesystem::create_directories(d->path() + "/level2"));
  ASSERT_TRUE(std::filesystem::create_directories(d->path() + "/__pycache__"));
  for (const char* n : {"level1/19_ReLU.py", "level1/2_Matmul.py", "level2/1_Conv.py", "__pycache__/x.py",
                        "level1/__init__.py"})
    ASSERT_TRUE(WriteFileAtomic(d->path() + "/" + n, "x = 1\n"));
  auto suite = DiscoverSuite(d->path());
  ASSERT_TRUE(suite) << suite.error();
  ASSERT_EQ(suite->size(), 3u);
  EXPECT_EQ((*suite)[0].name, "level1/2_Matmul");  // numbers as numbers
  EXPECT_EQ((*suite)[1].name, "level1/19_ReLU");
  EXPECT_EQ((*suite)[2].name, "level2/1_Conv");
}

TEST(TaskFileTest, FilterKeepsSuiteOrderAndRefusesAPatternThatMatchesNothing) {
  std::vector<TaskFile> suite;
  for (const char* n : {"level1/19_ReLU", "level1/20_GELU", "level2/5_Conv_ReLU", "softmax"})
    suite.push_back(TaskFile{n, "", "", ""});
  auto names = [](const std::vector<TaskFile>& ts) {
    std::vector<std::string> out;
    for (const TaskFile& t : ts) out.push_back(t.name);
    return out;
  };
  auto all = FilterTasks(suite, {});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 4u);
  auto relu = FilterTasks(suite, {"*ReLU*"});
  ASSERT_TRUE(relu) << relu.error();
  EXPECT_EQ(names(*relu), (std::vector<std::string>{"level1/19_ReLU", "level2/5_Conv_ReLU"}));
  auto two = FilterTasks(suite, {"softmax", "level1/*"});  // suite order, not pattern order
  ASSERT_TRUE(two) << two.error();
  EXPECT_EQ(names(*two), (std::vector<std::string>{"level1/19_ReLU", "level1/20_GELU", "softmax"}));
  auto typo = FilterTasks(suite, {"softmax", "sofmax"});
  ASSERT_FALSE(typo);
  EXPECT_NE(typo.error().find("--tasks sofmax matches no task"), std::string::npos) << typo.error();
}

TEST(TaskFileTest, EmptyOrMissingSuiteIsAnError) {
  auto d = TempDir::Create();
  ASSERT_TRUE(d);
  EXPECT_FALSE(DiscoverSuite(d->path()));
  EXPECT_FALSE(DiscoverSuite(d->path() + "/nope"));
  EXPECT_FALSE(LoadTaskFile(d->path() + "/x.txt"));
}

TEST(TaskFileTest, DescribeAnswerBecomesTaskInfo) {
  TaskFile f{"t", "/t.py", "", "h"};
  Json task = {{"has_twin", true}, {"num_parameters", 12},
               {"cases", {{{"name", "small"}, {"correctness", true}, {"performance", false}},
                          {{"name", "big"}, {"correctness", false}, {"performance", true}}}},
               {"meta", {{"rtol", 1e-3}, {"atol", nullptr}, {"nan_policy", "forbid"}, {"seeds", 5}}}};
  auto info = TaskInfoFromDescribe(f, task);
  ASSERT_TRUE(info) << info.error();
  EXPECT_TRUE(info->has_twin);
  EXPECT_EQ(info->CorrectnessCases(), std::vector<int>{0});
  EXPECT_EQ(info->PerformanceCases(), std::vector<int>{1});
  EXPECT_DOUBLE_EQ(*info->rtol, 1e-3);
  EXPECT_FALSE(info->atol);
  EXPECT_EQ(info->nan_policy, "forbid");
  EXPECT_EQ(info->seeds, 5);
  EXPECT_EQ(info->held_out, Json::array());  // a worker that sends no held-out notes
  task["held_out"] = Json::array({Json{{"case", "held_out_larger"}, {"listed", false}, {"why", "fails"}}});
  EXPECT_EQ(TaskInfoFromDescribe(f, task)->held_out, task["held_out"]);
}

TEST(TaskFileTest, MalformedDescribeAnswersAreErrors) {
  TaskFile f{"t", "/t.py", "", "h"};
  EXPECT_FALSE(TaskInfoFromDescribe(f, Json::object()));
  EXPECT_FALSE(TaskInfoFromDescribe(f, Json{{"cases", Json::array()}}));
  EXPECT_FALSE(TaskInfoFromDescribe(f, Json{{"cases", {{{"correctness", true}}}}}));  // no name
  EXPECT_FALSE(TaskInfoFromDescribe(
      f, Json{{"cases", {{{"name", "p"}, {"correctness", false}, {"performance", true}}}}}));
}

// Found by fuzz/fuzz_describe (fuzz/corpus/fuzz_describe/regress_float_num_parameters):
// a num_parameters too large for int64_t was converted from double, which is
// undefined behaviour (UBSan: "outside the range of representable values").
TEST(TaskFileTest, NumParametersMustBeAnInteger) {
  TaskFile f{"t", "/t.py", "", "h"};
  auto parse = [&](const char* text) { return TaskInfoFromDescribe(f, Json::parse(text)); };
  auto huge = parse(R"({"name":"relu","num_parameters":666666666666666666666665,)"
                    R"("cases":[{"name":"default","correctness":true}]})");
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().find("num_parameters"), std::string::npos) << huge.error();
  EXPECT_FALSE(parse(R"({"num_parameters":1.5,"cases":[{"name":"a"}]})"));
  EXPECT_FALSE(parse(R"({"num_parameters":"3","cases":[{"name":"a"}]})"));
  auto ok = parse(R"({"num_parameters":4096,"cases":[{"name":"a"}]})");
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(ok->num_parameters, 4096);
}

}  // namespace
}  // namespace kvault
