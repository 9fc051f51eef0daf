#include "util/json_parse.h"

#include <gtest/gtest.h>

namespace kvault {
namespace {

TEST(JsonParseTest, Depth) {
  EXPECT_EQ(JsonNestingDepth("1"), 0u);
  EXPECT_EQ(JsonNestingDepth("[[1],{\"a\":[2]}]"), 3u);
  EXPECT_EQ(JsonNestingDepth("{\"s\":\"[[[[\\\"]]\"}"), 1u);  // brackets inside a string
}

TEST(JsonParseTest, Valid) {
  auto j = ParseJson("{\"id\":3,\"ok\":true}");
  ASSERT_TRUE(j) << j.error();
  EXPECT_EQ((*j)["id"], 3);
}

TEST(JsonParseTest, InvalidGivesMessageNotException) {
  auto j = ParseJson("{\"id\":3,");
  ASSERT_FALSE(j);
  EXPECT_EQ(j.error().find("[json.exception"), std::string::npos) << j.error();
  EXPECT_NE(j.error().find("parse error"), std::string::npos) << j.error();
  EXPECT_FALSE(ParseJson(""));
  EXPECT_FALSE(ParseJson("{} trailing"));
  EXPECT_FALSE(ParseJson("\"\xff\""));  // invalid UTF-8
}

TEST(JsonParseTest, DeepNestingRejectedBeforeParsing) {
  std::string deep(1000000, '[');
  auto j = ParseJson(deep, 64);
  ASSERT_FALSE(j);
  EXPECT_NE(j.error().find("deeper than 64"), std::string::npos);
  EXPECT_TRUE(ParseJson(std::string(64, '[') + std::string(64, ']'), 64));
}

}  // namespace
}  // namespace kvault
