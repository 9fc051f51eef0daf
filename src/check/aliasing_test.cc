#include "check/aliasing.h"

#include <gtest/gtest.h>

namespace kvault {
namespace {

std::vector<OutputAlias> Parse(const Json& reply) {
  auto aliases = OutputAliases(reply);
  EXPECT_TRUE(aliases) << aliases.error();
  return aliases ? *aliases : std::vector<OutputAlias>();
}

TEST(OutputAliasesTest, AbsentOrEmptyMeansNone) {
  EXPECT_TRUE(Parse(Json{{"input_digest", "d"}}).empty());
  EXPECT_TRUE(Parse(Json{{"output_aliases", Json::array()}}).empty());
}

TEST(OutputAliasesTest, ReadsEveryEntry) {
  auto a =
      Parse(Json{{"output_aliases",
                  {{{"output", "output[1]"}, {"input", 0}}, {{"output", "output['h']"}, {"input", 2}}}}});
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].output, "output[1]");
  EXPECT_EQ(a[0].input, 0);
  EXPECT_EQ(a[1].output, "output['h']");
  EXPECT_EQ(a[1].input, 2);
}

TEST(OutputAliasesTest, MalformedFieldsAreErrors) {
  for (const Json& bad : {Json("output"), Json{{"output", "output"}}, Json::array({1}),
                          Json::array({Json{{"output", 3}, {"input", 0}}}),
                          Json::array({Json{{"output", "output"}, {"input", -1}}}),
                          Json::array({Json{{"output", "output"}, {"input", 0.5}}}),
                          Json::array({Json{{"output", "output"}}})}) {
    EXPECT_FALSE(OutputAliases(Json{{"output_aliases", bad}})) << bad.dump();
  }
}

TEST(ForbiddenAliasingTest, NoAliasedOutputIsAllowed) {
  EXPECT_EQ(ForbiddenAliasing({}, {}), "");
  EXPECT_EQ(ForbiddenAliasing({}, {{"output", 0}}), "");
}

TEST(ForbiddenAliasingTest, AnAliasTheReferenceLacksIsForbidden) {
  const std::string why = ForbiddenAliasing({{"output", 0}}, {});
  EXPECT_NE(why.find("output shares memory with input 0"), std::string::npos) << why;
  EXPECT_NE(why.find("aliases no input"), std::string::npos) << why;
}

TEST(ForbiddenAliasingTest, AllowedWhereTheReferenceAliasesTheSameOutput) {
  EXPECT_EQ(ForbiddenAliasing({{"output", 0}}, {{"output", 0}}), "");
  // The reference's view may be of another input: the output is a view either way.
  EXPECT_EQ(ForbiddenAliasing({{"output[0]", 1}}, {{"output[0]", 0}}), "");
}

TEST(ForbiddenAliasingTest, OnlyTheReferencesAliasedOutputsMayAlias) {
  const std::string why = ForbiddenAliasing({{"output[0]", 0}, {"output[1]", 0}}, {{"output[0]", 0}});
  EXPECT_NE(why.find("output[1] shares memory with input 0"), std::string::npos) << why;
}

}  // namespace
}  // namespace kvault
