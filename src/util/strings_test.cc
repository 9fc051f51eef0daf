#include "util/strings.h"

#include <gtest/gtest.h>

namespace kvault {
namespace {

TEST(StringsTest, Trim) {
  EXPECT_EQ(Trim("  a b \n\t"), "a b");
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim(" \r\n "), "");
}

TEST(StringsTest, SplitKeepsEmptyFields) {
  EXPECT_EQ(Split("a,b,,c", ','), (std::vector<std::string>{"a", "b", "", "c"}));
  EXPECT_EQ(Split("", ','), (std::vector<std::string>{""}));
  EXPECT_EQ(Split("x,", ','), (std::vector<std::string>{"x", ""}));
}

TEST(StringsTest, NaturalLessComparesNumbersAsNumbers) {
  EXPECT_TRUE(NaturalLess("sample_2", "sample_10"));
  EXPECT_FALSE(NaturalLess("sample_10", "sample_2"));
  EXPECT_TRUE(NaturalLess("iter9_0", "iter10_0"));
  EXPECT_TRUE(NaturalLess("iter1_1", "iter2_0"));
  EXPECT_TRUE(NaturalLess("a", "b"));
  EXPECT_TRUE(NaturalLess("relu.cpp", "relu.1.cpp") == ("relu.cpp" < std::string("relu.1.cpp")));
  EXPECT_TRUE(NaturalLess("x_1", "x_01"));  // equal numbers: fewer zeros first
  EXPECT_FALSE(NaturalLess("x_01", "x_1"));
  EXPECT_FALSE(NaturalLess("same", "same"));
  EXPECT_TRUE(NaturalLess("", "a"));
  EXPECT_TRUE(NaturalLess("level_1_problem_19_sample_9_kernel.py", "level_1_problem_19_sample_10_kernel.py"));
}

TEST(StringsTest, FitsRegexBoundsLinesAndBlankRuns) {
  EXPECT_TRUE(FitsRegex(""));
  EXPECT_TRUE(FitsRegex(std::string(kMostRegexChars, 'a') + "\n" + std::string(kMostRegexChars, 'b')));
  EXPECT_FALSE(FitsRegex("x\n" + std::string(kMostRegexChars + 1, 'a')));
  // Blank lines are short lines, but whitespace runs across them.
  EXPECT_FALSE(FitsRegex("#" + std::string(kMostRegexChars + 1, '\n') + "define X"));
  EXPECT_TRUE(FitsRegex(std::string(kMostRegexChars / 2, '\n') + "x" + std::string(kMostRegexChars / 2, '\n')));
}

TEST(StringsTest, Join) {
  EXPECT_EQ(Join({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(Join({}, ", "), "");
}

TEST(StringsTest, StartsEnds) {
  EXPECT_TRUE(StartsWith("kvault", "kv"));
  EXPECT_FALSE(StartsWith("kv", "kvault"));
  EXPECT_TRUE(EndsWith("a.cu", ".cu"));
}

TEST(StringsTest, TruncateShortIsUnchanged) {
  EXPECT_EQ(Truncate("hello", 5), "hello");
  EXPECT_EQ(Truncate("", 0), "");
}

TEST(StringsTest, TruncateKeepsHeadAndTail) {
  std::string s = std::string(100, 'a') + std::string(100, 'b') + std::string(100, 'c');
  std::string t = Truncate(s, 100);
  EXPECT_EQ(t, std::string(50, 'a') + "\n[... 200 bytes omitted ...]\n" + std::string(50, 'c'));
}

TEST(StringsTest, TruncateDoesNotSplitUtf8) {
  // "é" is 2 bytes (C3 A9); place one across each cut point.
  std::string s = "abcd\xC3\xA9" + std::string(20, 'x') + "\xC3\xA9" "wxyz";
  // size 32, max 10: head cut at 5 (inside the first é), tail starts at 27 (inside the last).
  std::string t = Truncate(s, 10);
  EXPECT_EQ(t, "abcd\n[... 24 bytes omitted ...]\nwxyz");
}

TEST(StringsTest, HeadTailBufferMatchesTruncate) {
  std::string s;
  for (int i = 0; i < 5000; ++i) s += std::to_string(i) + ",";
  for (size_t limit : {0u, 1u, 7u, 100u, 4096u, 100000u}) {
    HeadTailBuffer buf(limit);
    for (size_t pos = 0; pos < s.size(); pos += 37) buf.Append(std::string_view(s).substr(pos, 37));
    EXPECT_EQ(buf.total(), s.size());
    EXPECT_EQ(buf.Take(), Truncate(s, limit)) << "limit " << limit;
    EXPECT_EQ(buf.total(), 0u);
    EXPECT_EQ(buf.Take(), "");
  }
}

TEST(StringsTest, FormatBytes) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1048575), "1048575 B");
  EXPECT_EQ(FormatBytes(uint64_t{300} << 20), "300 MiB");
  EXPECT_EQ(FormatBytes((uint64_t{300} << 20) + 5), "300 MiB");
  EXPECT_EQ(FormatBytes(uint64_t{8} << 30), "8 GiB");
  EXPECT_EQ(FormatBytes((uint64_t{72} << 30) + (uint64_t{410} << 20)), "72.4 GiB");
}

TEST(StringsTest, FormatDuration) {
  using std::chrono::milliseconds;
  EXPECT_EQ(FormatDuration(milliseconds(250)), "250 ms");
  EXPECT_EQ(FormatDuration(milliseconds(30000)), "30 s");
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1.5 s");
  EXPECT_EQ(FormatDuration(milliseconds(1025)), "1.025 s");
}

}  // namespace
}  // namespace kvault
