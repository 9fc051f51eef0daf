// The names the service gives the tasks requests bring (score::NameServeTasks reads
// them back: docs/serve.md, docs/scoring.md).
#include "serve/service.h"

#include <gtest/gtest.h>

namespace kvault::serve {
namespace {

const std::string kHash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

TEST(ServeTaskName, LabelThenTheFirstTwelveDigitsOfTheHash) {
  EXPECT_EQ(ServeTaskName("relu", kHash), "relu-0123456789ab");
  EXPECT_EQ(ServeTaskName("level1/19_ReLU", kHash), "level1_19_ReLU-0123456789ab");
}

TEST(ServeTaskName, ALabelIsMadeSafeForAFileName) {
  EXPECT_EQ(ServeTaskName("", kHash), "t-0123456789ab");
  EXPECT_EQ(ServeTaskName(".hidden", kHash), "t.hidden-0123456789ab");
  EXPECT_EQ(ServeTaskName("../../etc", kHash), "t.._.._etc-0123456789ab");
  EXPECT_EQ(ServeTaskName(std::string(100, 'a'), kHash), std::string(64, 'a') + "-0123456789ab");
}

TEST(RecordedTaskName, ASuiteTaskKeepsItsNameAnyOtherIsALabel) {
  ServeRequest r;
  r.task_name = "add";
  EXPECT_EQ(RecordedTaskName(r, kHash), "add-0123456789ab");  // a client's label
  r.suite_task = true;                                         // Triton's /evaluate
  EXPECT_EQ(RecordedTaskName(r, kHash), "add");
  // The request's tolerances made other bytes than the suite's task: a label again.
  r.atol = 1e-3;
  EXPECT_EQ(RecordedTaskName(r, kHash), "add-0123456789ab");
  r.atol.reset();
  r.rtol = 0.0;
  EXPECT_EQ(RecordedTaskName(r, kHash), "add-0123456789ab");
}

}  // namespace
}  // namespace kvault::serve
