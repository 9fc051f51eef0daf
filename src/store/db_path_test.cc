#include <gtest/gtest.h>
#include <stdlib.h>

#include "store/store.h"

namespace kvault {
namespace {

// Sets or clears $KVAULT_DB for one test and restores it afterwards.
class ScopedKvaultDb {
 public:
  explicit ScopedKvaultDb(const char* value) {
    if (const char* old = getenv("KVAULT_DB")) old_ = old;
    value ? setenv("KVAULT_DB", value, 1) : unsetenv("KVAULT_DB");
  }
  ~ScopedKvaultDb() { old_ ? setenv("KVAULT_DB", old_->c_str(), 1) : unsetenv("KVAULT_DB"); }

 private:
  std::optional<std::string> old_;
};

TEST(ResolveDbPath, FlagBeatsEnvironmentBeatsDefault) {
  {
    ScopedKvaultDb env("/env/kv.db");
    EXPECT_EQ(ResolveDbPath(std::string("/flag/kv.db")), "/flag/kv.db");
    EXPECT_EQ(ResolveDbPath(std::nullopt), "/env/kv.db");
    EXPECT_EQ(ResolveDbPath(std::string("")), "/env/kv.db");  // empty flag = not given
  }
  {
    ScopedKvaultDb env(nullptr);
    EXPECT_EQ(ResolveDbPath(std::nullopt), "./kvault.db");
    EXPECT_EQ(ResolveDbPath(std::string("x.db")), "x.db");
  }
  {
    ScopedKvaultDb env("");
    EXPECT_EQ(ResolveDbPath(std::nullopt), "./kvault.db");
  }
}

}  // namespace
}  // namespace kvault
