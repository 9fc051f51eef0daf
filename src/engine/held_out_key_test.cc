#include "engine/held_out_key.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace kvault {
namespace {

// One key for the whole process (every worker of every lane draws the same sizes), and
// not one a candidate could guess: 128 bits, as hex.
TEST(HeldOutKeyTest, OneKeyPerProcessOf128RandomBits) {
  const std::string& key = HeldOutKey();
  EXPECT_EQ(&key, &HeldOutKey());
  if (std::getenv("KVAULT_HELD_OUT_KEY") != nullptr) GTEST_SKIP() << "KVAULT_HELD_OUT_KEY is set";
  ASSERT_EQ(key.size(), 32u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos) << key;
  EXPECT_NE(key, std::string(32, '0'));
}

}  // namespace
}  // namespace kvault
