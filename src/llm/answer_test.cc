#include "llm/answer.h"

#include <gtest/gtest.h>

namespace kvault::llm {
namespace {

ExtractOptions Want(std::string language) {
  ExtractOptions o;
  o.expected_language = std::move(language);
  return o;
}

// The error of a failed extraction; fails the test when it succeeded.
std::string FailureOf(std::string_view answer, const ExtractOptions& options = {}) {
  auto r = ExtractCode(answer, options);
  EXPECT_FALSE(r.ok()) << "extracted: " << (r ? r->code : "");
  return r ? "" : r.error();
}

TEST(ExtractCode, OneFencedBlockWithProse) {
  auto r = ExtractCode("Here is the kernel:\n```cpp\nint main() {}\n```\nIt is fast.", Want("hip"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->code, "int main() {}\n");
  EXPECT_EQ(r->source, CodeSource::kFencedBlock);
  EXPECT_EQ(r->fence_language, "cpp");
}

TEST(ExtractCode, TildeFenceUntaggedAndCrlf) {
  auto r = ExtractCode("~~~\r\nx = 1\r\ny = 2\r\n~~~\r\n", Want("python"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->code, "x = 1\ny = 2\n");
  EXPECT_EQ(r->fence_language, "");
}

TEST(ExtractCode, LongerFenceHoldsShorterFencesInside) {
  auto r = ExtractCode("````python\ns = '''\n```\n'''\n````", Want("python"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->code, "s = '''\n```\n'''\n");
}

TEST(ExtractCode, IndentedFenceIsDedented) {
  auto r = ExtractCode("1. The code:\n   ```cuda\n   __global__ void k() {}\n     int x;\n   ```\n", Want("cuda"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->code, "__global__ void k() {}\n  int x;\n");
}

TEST(ExtractCode, InlineTripleBackticksAreProse) {
  auto r = ExtractCode("Use ```x``` inline.\n```hip\nk();\n```", Want("hip"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->code, "k();\n");
}

TEST(ExtractCode, ThinkingIsDropped) {
  auto r = ExtractCode("<think>maybe ```cpp\nwrong\n``` or </think> hmm</think>\n```cpp\nright\n```", Want("cpp"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->code, "right\n");
}

TEST(ExtractCode, UnclosedThinkFails) {
  EXPECT_NE(FailureOf("<think>I will write\n```cpp\nx\n```").find("never closed it with </think>"),
            std::string::npos);
  EXPECT_NE(FailureOf("<think>a</think> ok <think> again ```cpp\nx\n```").find("<think>"), std::string::npos);
}

TEST(ExtractCode, ZeroBlocksFail) {
  std::string e = FailureOf("I think you should use shared memory.", Want("hip"));
  EXPECT_NE(e.find("had no code block"), std::string::npos) << e;
  EXPECT_NE(e.find("Reply with exactly one fenced code block (```hip"), std::string::npos) << e;
  EXPECT_NE(FailureOf("").find("empty"), std::string::npos);
  EXPECT_NE(FailureOf("<think>only thoughts</think>   \n").find("empty"), std::string::npos);
}

TEST(ExtractCode, TwoBlocksFail) {
  std::string e = FailureOf("```cpp\na\n```\nand\n```cpp\nb\n```");
  EXPECT_NE(e.find("had 2 code blocks"), std::string::npos) << e;
  EXPECT_NE(e.find("exactly one"), std::string::npos) << e;
}

TEST(ExtractCode, UnterminatedFenceFails) {
  EXPECT_NE(FailureOf("```cpp\nint x;\n").find("never closed"), std::string::npos);
  EXPECT_NE(FailureOf("```cpp\na\n```\n```cpp\nb").find("never closed"), std::string::npos);
  // a closing fence must be at least as long as the opening one
  EXPECT_NE(FailureOf("````cpp\na\n```\n").find("never closed"), std::string::npos);
  // and of the same character
  EXPECT_NE(FailureOf("```cpp\na\n~~~\n").find("never closed"), std::string::npos);
}

TEST(ExtractCode, EmptyBlockFails) {
  EXPECT_NE(FailureOf("```cpp\n\n   \n```").find("was empty"), std::string::npos);
  EXPECT_NE(FailureOf("<answer>\n  \n</answer>").find("empty"), std::string::npos);
}

TEST(ExtractCode, SizeCap) {
  ExtractOptions o;
  o.max_code_bytes = 8;
  EXPECT_TRUE(ExtractCode("```\n1234567\n```", o).ok());  // 8 bytes with the newline
  EXPECT_NE(FailureOf("```\n12345678\n```", o).find("9 bytes, over the limit of 8"), std::string::npos);
}

TEST(ExtractCode, LanguageTagMustFit) {
  EXPECT_TRUE(ExtractCode("```cuda\nx\n```", Want("hip")).ok());
  EXPECT_TRUE(ExtractCode("```C++\nx\n```", Want("cpp")).ok());
  EXPECT_TRUE(ExtractCode("```py\nx\n```", Want("python")).ok());
  EXPECT_TRUE(ExtractCode("```rust\nx\n```", Want("")).ok());
  std::string e = FailureOf("```python\nx\n```", Want("cpp"));
  EXPECT_NE(e.find("tagged 'python' but cpp source was asked for"), std::string::npos) << e;
  EXPECT_FALSE(ExtractCode("```cpp\nx\n```", Want("python")).ok());
  EXPECT_FALSE(ExtractCode("```json\n{}\n```", Want("hip")).ok());
  // an expected language outside the known families must match exactly
  EXPECT_TRUE(ExtractCode("```mojo\nx\n```", Want("mojo")).ok());
  EXPECT_FALSE(ExtractCode("```cpp\nx\n```", Want("mojo")).ok());
}

TEST(ExtractCode, AnswerRegionWithBareCode) {
  auto r = ExtractCode("Reasoning here.\n<answer>\n\n#include <x>\nint y;\n</answer>", Want("cpp"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->code, "#include <x>\nint y;\n");
  EXPECT_EQ(r->source, CodeSource::kAnswerTag);
  auto indented = ExtractCode("<answer>\n\n    x = 1\n  \n</answer>", Want("python"));
  ASSERT_TRUE(indented.ok()) << indented.error();
  EXPECT_EQ(indented->code, "    x = 1\n");  // blank lines around go, indentation stays
}

TEST(ExtractCode, AnswerRegionHoldingOneBlock) {
  auto r = ExtractCode("<answer>\nThe code:\n```hip\nk();\n```\n</answer>", Want("hip"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->code, "k();\n");
  EXPECT_EQ(r->source, CodeSource::kAnswerTag);
  EXPECT_EQ(r->fence_language, "hip");
}

TEST(ExtractCode, AnswerRegionProblems) {
  EXPECT_NE(FailureOf("<answer>a</answer><answer>b</answer>").find("2 <answer> and 2 </answer>"),
            std::string::npos);
  EXPECT_NE(FailureOf("<answer>a").find("1 <answer> and 0 </answer>"), std::string::npos);
  EXPECT_NE(FailureOf("</answer>a<answer>").find("before"), std::string::npos);
  EXPECT_NE(FailureOf("<answer>```cpp\na\n```\n```cpp\nb\n```</answer>").find("2 code blocks inside <answer>"),
            std::string::npos);
  EXPECT_NE(FailureOf("```cpp\ndraft\n```\n<answer>final</answer>").find("outside its <answer>"),
            std::string::npos);
  EXPECT_NE(FailureOf("<answer>```cpp\nx\n</answer>").find("never closed"), std::string::npos);
  EXPECT_FALSE(ExtractCode("<answer>```python\nx\n```</answer>", Want("cpp")).ok());
}

TEST(ExtractCode, JsonObject) {
  auto r = ExtractCode(R"(  {"thought": "use tiles", "code": "int x;\nint y;"}  )", Want("cpp"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->code, "int x;\nint y;\n");
  EXPECT_EQ(r->source, CodeSource::kJson);
  auto fenced = ExtractCode(R"(<think>hm</think>{"code": "```cpp\nk();\n```"})", Want("cpp"));
  ASSERT_TRUE(fenced.ok()) << fenced.error();
  EXPECT_EQ(fenced->code, "k();\n");
  EXPECT_EQ(fenced->source, CodeSource::kJson);
}

TEST(ExtractCode, JsonProblems) {
  EXPECT_NE(FailureOf(R"({"thought": "x", "code": "int)").find("not valid JSON"), std::string::npos);
  EXPECT_NE(FailureOf(R"({"thought": "x"})").find("no string field \"code\""), std::string::npos);
  EXPECT_NE(FailureOf(R"({"code": 5})").find("no string field"), std::string::npos);
  EXPECT_NE(FailureOf(R"({"code": "x"} trailing)").find("not valid JSON"), std::string::npos);
  EXPECT_NE(FailureOf(R"({"code": ""})").find("empty"), std::string::npos);
  EXPECT_NE(FailureOf(std::string(100, '{')).find("not valid JSON"), std::string::npos);
}

TEST(ExtractCode, EveryFailureEndsWithTheInstruction) {
  for (std::string_view bad : {"", "no code", "```a\n```\n```b\n```", "<think>", "{", "```x\n"}) {
    std::string e = FailureOf(bad, Want("cuda"));
    EXPECT_NE(e.find("Reply with exactly one fenced code block (```cuda ... ```)"), std::string::npos) << e;
  }
}

TEST(CodeSourceNames, AreStable) {
  EXPECT_EQ(ToString(CodeSource::kFencedBlock), "fenced_block");
  EXPECT_EQ(ToString(CodeSource::kAnswerTag), "answer_tag");
  EXPECT_EQ(ToString(CodeSource::kJson), "json");
}

}  // namespace
}  // namespace kvault::llm
