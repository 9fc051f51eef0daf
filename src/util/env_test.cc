#include "util/env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace kvault {
namespace {

// Sets or unsets variables for one test and restores them afterwards.
class ScopedEnv {
 public:
  void Set(const char* name, const char* value) {
    Save(name);
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    for (auto& [name, old] : saved_) {
      if (old) {
        ::setenv(name.c_str(), old->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  void Save(const char* name) { saved_.emplace_back(name, GetEnv(name)); }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(EnvTest, GetEnv) {
  ScopedEnv env;
  env.Set("KVAULT_TEST_VAR", "x y");
  EXPECT_EQ(GetEnv("KVAULT_TEST_VAR"), "x y");
  env.Set("KVAULT_TEST_VAR", "");
  EXPECT_EQ(GetEnv("KVAULT_TEST_VAR"), "");
  env.Set("KVAULT_TEST_VAR", nullptr);
  EXPECT_EQ(GetEnv("KVAULT_TEST_VAR"), std::nullopt);
}

TEST(EnvTest, DefaultCacheDirPrecedence) {
  ScopedEnv env;
  env.Set("KVAULT_CACHE_DIR", "/c/kv");
  env.Set("XDG_CACHE_HOME", "/xdg");
  env.Set("HOME", "/home/u");
  EXPECT_EQ(DefaultCacheDir(), "/c/kv");
  env.Set("KVAULT_CACHE_DIR", "");
  EXPECT_EQ(DefaultCacheDir(), "/xdg/kvault");
  env.Set("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(DefaultCacheDir(), "/home/u/.cache/kvault");
  env.Set("HOME", nullptr);
  EXPECT_EQ(DefaultCacheDir(), "/tmp/kvault-cache");
}

}  // namespace
}  // namespace kvault
