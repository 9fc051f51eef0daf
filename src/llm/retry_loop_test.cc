#include "llm/retry_loop.h"

#include <gtest/gtest.h>

namespace kvault::llm {
namespace {

TEST(RetryLoop, Backoff) {
  ClientSettings s;
  s.backoff_base_s = 1;
  s.backoff_cap_s = 5;
  s.max_retry_after_s = 60;
  EXPECT_DOUBLE_EQ(BackoffSeconds(s, 1, std::nullopt, 1.0), 1);
  EXPECT_DOUBLE_EQ(BackoffSeconds(s, 3, std::nullopt, 1.0), 4);
  EXPECT_DOUBLE_EQ(BackoffSeconds(s, 3, std::nullopt, 0.5), 2);
  EXPECT_DOUBLE_EQ(BackoffSeconds(s, 10, std::nullopt, 1.0), 5);  // capped
  EXPECT_DOUBLE_EQ(BackoffSeconds(s, 1, 30.0, 0.5), 30);          // Retry-After wins, no jitter
  EXPECT_DOUBLE_EQ(BackoffSeconds(s, 1, 1e6, 1.0), 60);           // up to the limit
  EXPECT_DOUBLE_EQ(BackoffSeconds(s, 1, 0.0, 1.0), 0);
}

TEST(RetryLoop, ErrorMessageOfBody) {
  EXPECT_EQ(ErrorMessageOfBody(R"({"error": {"message": "bad key"}})"), "bad key");
  EXPECT_EQ(ErrorMessageOfBody(R"({"error": "model not found"})"), "model not found");
  EXPECT_EQ(ErrorMessageOfBody(R"({"message": "m"})"), "m");
  EXPECT_EQ(ErrorMessageOfBody("<html>\nBad Gateway</html>"), "<html> Bad Gateway</html>");
  EXPECT_EQ(ErrorMessageOfBody(std::string(500, 'x')).size(), 203u);
}

}  // namespace
}  // namespace kvault::llm
