#include "cli/lanes.h"

#include <gtest/gtest.h>

namespace kvault::cli {
namespace {

TEST(Lanes, AutoOnAGpuIsSixBoundedByCores) {
  EXPECT_EQ(AutoLanes(Backend::kCuda, 16), 6);
  EXPECT_EQ(AutoLanes(Backend::kHip, 128), 6);
  EXPECT_EQ(AutoLanes(Backend::kCuda, 4), 4);
  EXPECT_EQ(AutoLanes(Backend::kCuda, 0), 1);  // unknown core count
}

TEST(Lanes, AutoOnTheCpuIsOnePerFourCores) {
  EXPECT_EQ(AutoLanes(Backend::kCpu, 2), 1);
  EXPECT_EQ(AutoLanes(Backend::kCpu, 8), 2);
  EXPECT_EQ(AutoLanes(Backend::kCpu, 16), 4);
  EXPECT_EQ(AutoLanes(Backend::kCpu, 128), 8);
  EXPECT_EQ(AutoLanes(Backend::kCpu, 0), 1);
}

TEST(Lanes, ParseTakesAutoOrAWholeNumberInRange) {
  EXPECT_EQ(*ParseJobs("3", Backend::kCuda, 16), 3);
  EXPECT_EQ(*ParseJobs("auto", Backend::kCuda, 16), 6);
  EXPECT_EQ(*ParseJobs("256", Backend::kCpu, 2), 256);
  for (const char* bad : {"0", "257", "-1", "2x", "", "Auto", "1.5"}) {
    auto r = ParseJobs(bad, Backend::kCpu, 2);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().find("give auto or a whole number"), std::string::npos) << r.error();
  }
  EXPECT_EQ(CheckJobsText("auto"), "");
  EXPECT_NE(CheckJobsText("many"), "");
}

}  // namespace
}  // namespace kvault::cli
