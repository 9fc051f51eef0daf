#include "geak/geak_import.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "util/files.h"

namespace kvault {
namespace {

const std::string kSep(kGeakSeparatorWidth, '#');

TEST(GeakImport, SplitsAtALineOfExactly146Hashes) {
  auto parts = SplitGeakFile("impl = 1\n" + kSep + "\nresult_gold = impl\n");
  ASSERT_TRUE(parts) << parts.error();
  EXPECT_EQ(parts->implementation, "impl = 1\n");
  EXPECT_EQ(parts->tests, "result_gold = impl\n");
  auto crlf = SplitGeakFile("a = 1\r\n" + kSep + "\r\nb = a\r\n");
  ASSERT_TRUE(crlf) << crlf.error();
  EXPECT_EQ(crlf->tests, "b = a\r\n");
}

TEST(GeakImport, OtherSeparatorsAndBlankSidesAreErrors) {
  EXPECT_FALSE(SplitGeakFile("a = 1\n" + std::string(145, '#') + "\nb = 2\n"));
  EXPECT_FALSE(SplitGeakFile("a = 1\n" + std::string(147, '#') + "\nb = 2\n"));
  EXPECT_FALSE(SplitGeakFile("a = 1\n# " + kSep + "\nb = 2\n"));
  auto no_tests = SplitGeakFile("a = 1\n" + kSep + "\n  \n");
  ASSERT_FALSE(no_tests);
  EXPECT_NE(no_tests.error().find("test code"), std::string::npos);
  EXPECT_FALSE(SplitGeakFile("\n" + kSep + "\nb = 2\n"));
}

TEST(GeakImport, CandidateKeepsOnlyItsImplementation) {
  auto with_tests = CandidateImplementation("impl\n" + kSep + "\nmy own tests\n");
  ASSERT_TRUE(with_tests);
  EXPECT_EQ(*with_tests, "impl\n");
  EXPECT_EQ(*CandidateImplementation("impl only"), "impl only");
  EXPECT_FALSE(CandidateImplementation(" \n" + kSep + "\ntests\n"));
}

TEST(GeakImport, GeneratedFilesEmbedTheSourcesAsPythonLiterals) {
  GeakParts parts{"x = \"\"\"q\"\"\" \\ \xc3\xa9\n", "result_gold = {'a': 1}\n"};
  std::string task = MakeGeakTask(GeakFormat::kRocmBench, "t.py", parts);
  EXPECT_NE(task.find("IMPLEMENTATION = \"x = \\\"\\\"\\\"q\\\"\\\"\\\" \\\\ \\u00e9\\n\""), std::string::npos)
      << task;
  EXPECT_NE(task.find("\"rtol\": 1e-2"), std::string::npos);
  EXPECT_NE(task.find("def forward(self, fn=module_fn)"), std::string::npos);
  std::string cand = MakeGeakCandidate(GeakFormat::kTritonBenchG, "import triton\n", parts);
  EXPECT_EQ(cand.rfind("import triton\n", 0), 0u);
  EXPECT_NE(cand.find("def module_fn():"), std::string::npos);
  EXPECT_NE(cand.find("\"tritonbench-g\", globals(), _KVAULT_TESTS"), std::string::npos);
}

TEST(GeakImport, ImportWritesGoodFilesAndListsTheOthers) {
  auto dir = TempDir::Create();
  ASSERT_TRUE(dir);
  const std::string d = dir->path();
  std::filesystem::create_directories(d + "/tasks");
  std::filesystem::create_directories(d + "/cands");
  ASSERT_TRUE(WriteFileAtomic(d + "/tasks/add.py", "impl\n" + kSep + "\ntests\n"));
  ASSERT_TRUE(WriteFileAtomic(d + "/tasks/broken.py", "no separator\n"));
  ASSERT_TRUE(WriteFileAtomic(d + "/cands/add.wrong.py", "cand impl\n"));
  ASSERT_TRUE(WriteFileAtomic(d + "/cands/other.py", "cand impl\n"));
  auto s = ImportGeak(GeakFormat::kTritonBenchG, d + "/tasks", d + "/cands", d + "/out");
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->tasks_written, std::vector<std::string>{d + "/out/suite/add.py"});
  EXPECT_EQ(s->candidates_written, std::vector<std::string>{d + "/out/candidates/add.wrong.py"});
  ASSERT_EQ(s->problems.size(), 2u);
  EXPECT_NE(s->problems[0].find("broken.py"), std::string::npos);
  EXPECT_NE(s->problems[1].find("other.py"), std::string::npos);
  EXPECT_FALSE(ImportGeak(GeakFormat::kTritonBenchG, d + "/missing", "", d + "/out"));
}

}  // namespace
}  // namespace kvault
