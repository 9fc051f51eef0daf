#include "engine/engine_env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "sandbox/capabilities.h"

namespace kvault {
namespace {

constexpr const char* kVar = "KVAULT_DEVICE_COMPARE_MIN_BYTES";

TEST(EngineEnvTest, DeviceCompareThresholdComesFromTheEnvironment) {
  unsetenv(kVar);
  EngineOptions defaults;
  ApplyEnvironment(defaults);
  EXPECT_EQ(defaults.device_compare_min_bytes, int64_t{16} << 20);
  setenv(kVar, "0", 1);
  EngineOptions every;
  ApplyEnvironment(every);
  EXPECT_EQ(every.device_compare_min_bytes, 0);
  setenv(kVar, "-1", 1);
  EngineOptions never;
  ApplyEnvironment(never);
  EXPECT_EQ(never.device_compare_min_bytes, -1);
  unsetenv(kVar);
}

TEST(EngineEnvTest, MalformedDeviceCompareThresholdStopsWorkerStarts) {
  setenv(kVar, "12 GB", 1);
  EngineOptions o;
  ApplyEnvironment(o);
  unsetenv(kVar);
  EXPECT_NE(o.sandbox_error.find(kVar), std::string::npos) << o.sandbox_error;
  EXPECT_EQ(o.device_compare_min_bytes, int64_t{16} << 20);
}

TEST(EngineEnvTest, GroupTurnsComeFromTheEnvironment) {
  unsetenv("KVAULT_GROUP_TURNS");
  EngineOptions on;
  ApplyEnvironment(on);
  EXPECT_EQ(on.timing.group_max, 8);
  setenv("KVAULT_GROUP_TURNS", "off", 1);
  EngineOptions off;
  ApplyEnvironment(off);
  EXPECT_EQ(off.timing.group_max, 1);
  setenv("KVAULT_GROUP_TURNS", "maybe", 1);
  EngineOptions bad;
  ApplyEnvironment(bad);
  unsetenv("KVAULT_GROUP_TURNS");
  EXPECT_NE(bad.sandbox_error.find("KVAULT_GROUP_TURNS"), std::string::npos) << bad.sandbox_error;
}

// A program that links the engine but does not answer sandbox-exec (this test binary)
// names no launcher: named, every worker start would run this binary's tests again,
// each starting more.
TEST(EngineEnvTest, AProgramThatIsNotKvaultNamesNoSandboxLauncher) {
  ASSERT_FALSE(SelfIsSandboxLauncher());
  EngineOptions o;
  ApplyEnvironment(o);
  EXPECT_EQ(o.sandbox_launcher, "");
}

}  // namespace
}  // namespace kvault
