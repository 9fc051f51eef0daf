// MakeOptions' check of an explicit GPU backend left to the command's workers.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "util/files.h"

namespace kvault::cli {
namespace {

// A Python that cannot start: any worker asked fails at once.
class NoWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create();
    ASSERT_TRUE(dir);
    dir_.emplace(std::move(*dir));
    setenv("KVAULT_CACHE_DIR", (dir_->path() + "/cache").c_str(), 1);
    setenv("KVAULT_PYTHON", (dir_->path() + "/no-such-python").c_str(), 1);
    // The sandbox's launcher would be this test binary (/proc/self/exe), which runs
    // every test again instead of `sandbox-exec`: each run starts more.
    setenv("KVAULT_SANDBOX", "off", 1);
    flags_.backend = "cuda";
  }
  void TearDown() override {
    unsetenv("KVAULT_CACHE_DIR");
    unsetenv("KVAULT_PYTHON");
    unsetenv("KVAULT_SANDBOX");
  }
  std::optional<TempDir> dir_;
  CommonFlags flags_;
};

TEST_F(NoWorkerTest, LeftToTheWorkersNoWorkerStartsBeforeThem) {
  int exit_code = kExitOk;
  auto options = MakeOptions(flags_, false, &exit_code, BackendCheck::kByWorkers);
  ASSERT_TRUE(options);
  EXPECT_EQ(options->backend, Backend::kCuda);
  // Checked now, the same flags fail: the worker asked cannot start (misuse). The
  // words eval prints then are BackendUnusable's (tests/integration/test_cli_contract.sh).
}

TEST_F(NoWorkerTest, TheCpuBackendNeedsNoCheck) {
  flags_.backend = "cpu";
  int exit_code = kExitOk;
  auto options = MakeOptions(flags_, false, &exit_code, BackendCheck::kNow);
  ASSERT_TRUE(options);
  EXPECT_FALSE(BackendUnusable(*options));
}

}  // namespace
}  // namespace kvault::cli
