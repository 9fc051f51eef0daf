#include "agent/template.h"

#include <gtest/gtest.h>

namespace kvault::agent {
namespace {

TEST(RenderTemplate, FillsPlaceholdersWithAndWithoutSpaces) {
  auto r = RenderTemplate("task: {{task_name}}\n{{ iteration }}!", {{"task_name", "relu"}, {"iteration", "2"}});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(*r, "task: relu\n2!");
}

TEST(RenderTemplate, ValuesAreNotRescanned) {
  auto r = RenderTemplate("a {{x}} b", {{"x", "{{y}}"}});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(*r, "a {{y}} b");
}

TEST(RenderTemplate, UnfilledPlaceholderIsAnErrorNamingLine) {
  auto r = RenderTemplate("one\ntwo {{missing}}", {{"x", "1"}});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("line 2"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("missing"), std::string::npos) << r.error();
}

TEST(RenderTemplate, MalformedPlaceholdersAreErrors) {
  EXPECT_FALSE(RenderTemplate("{{open", {}));
  EXPECT_FALSE(RenderTemplate("{{Bad-Name}}", {{"Bad-Name", "x"}}));
  EXPECT_FALSE(RenderTemplate("{{}}", {}));
}

TEST(Placeholders, ListsDistinctNamesInOrder) {
  auto r = Placeholders("{{b}} {{a}} {{b}}");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (std::vector<std::string>{"b", "a"}));
}

}  // namespace
}  // namespace kvault::agent
