#include "llm/anthropic_client.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "llm/testing/replay_server.h"

namespace kvault::llm {
namespace {

using testing::ReplayServer;

ChatRequest Ask(std::string text) {
  ChatRequest r;
  r.model = "claude-test";
  r.messages = {{"system", "You write kernels."}, {"system", "Be brief."}, {"user", std::move(text)}};
  return r;
}

TEST(AnthropicMessagesUrl, Forms) {
  EXPECT_EQ(*AnthropicMessagesUrl("https://api.anthropic.com"), "https://api.anthropic.com/v1/messages");
  EXPECT_EQ(*AnthropicMessagesUrl("https://api.anthropic.com/v1/"), "https://api.anthropic.com/v1/messages");
  EXPECT_EQ(*AnthropicMessagesUrl("http://h:1/v1/messages"), "http://h:1/v1/messages");
  EXPECT_FALSE(AnthropicMessagesUrl("api.anthropic.com").ok());
  EXPECT_FALSE(AnthropicMessagesUrl("https://").ok());
}

TEST(AnthropicWire, RequestBodyMovesSystemMessages) {
  ChatRequest r = Ask("hi");
  r.seed = 3;
  Json body = AnthropicRequestBody(r);
  EXPECT_EQ(body["system"], "You write kernels.\n\nBe brief.");
  ASSERT_EQ(body["messages"].size(), 1u);
  EXPECT_EQ(body["messages"][0]["role"], "user");
  EXPECT_EQ(body["max_tokens"], kDefaultAnthropicMaxTokens);
  EXPECT_FALSE(body.contains("seed"));
  EXPECT_FALSE(body.contains("temperature"));
  r.max_tokens = 100;
  r.temperature = 0.2;
  Json set = AnthropicRequestBody(r);
  EXPECT_EQ(set["max_tokens"], 100);
  EXPECT_EQ(set["temperature"], 0.2);
}

TEST(AnthropicWire, ParseReply) {
  auto ok = ParseAnthropicReply(Json::parse(R"({"model": "c-1", "stop_reason": "max_tokens",
      "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
      "usage": {"input_tokens": 5, "output_tokens": 7}})"), "c");
  ASSERT_TRUE(ok.ok()) << ok.error();
  EXPECT_EQ(ok->content, "ab");
  EXPECT_EQ(ok->model_returned, "c-1");
  EXPECT_EQ(ok->finish_reason, "max_tokens");
  EXPECT_EQ(ok->prompt_tokens, 5);
  EXPECT_EQ(ok->completion_tokens, 7);
  EXPECT_EQ(ParseAnthropicReply(Json::parse(R"({"content": []})"), "c").error(), "reply's content has no text block");
  EXPECT_EQ(ParseAnthropicReply(Json::parse(R"({"content": "x"})"), "c").error(), "reply lacks a content array");
  EXPECT_EQ(ParseAnthropicReply(Json::parse("3"), "c").error(), "reply is not a JSON object");
}

TEST(AnthropicClient, AgainstTheReplayServer) {
  auto started = ReplayServer::Start(R"({"rules": [{"match": ["Be brief.", "relu"], "responses":
      [{"status": 529}, {"content": "```cpp\nk();\n```"}]}]})");
  if (!started) GTEST_SKIP() << started.error();
  ReplayServer& server = *started;
  setenv("KVAULT_LLM_TEST_ANTHROPIC_KEY", "ak", 1);
  ClientSettings s;
  s.endpoint = server.url();
  s.api_key_env = "KVAULT_LLM_TEST_ANTHROPIC_KEY";
  s.backoff_base_s = 0.01;
  auto r = MakeAnthropicClient(s)->Complete(Ask("write relu"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->content, "```cpp\nk();\n```");
  EXPECT_EQ(r->attempts, 2);  // 529 (overloaded) is retried
  EXPECT_EQ(r->finish_reason, "end_turn");
  EXPECT_EQ(r->model_returned, "claude-test");
  EXPECT_EQ(r->completion_tokens, 3);
  auto log = server.Requests();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1]["path"], "/v1/messages");
  EXPECT_EQ(log[1]["x_api_key"], "ak");
  EXPECT_EQ(log[1]["anthropic_version"], kAnthropicVersion);
  EXPECT_TRUE(log[1]["authorization"].is_null());
  unsetenv("KVAULT_LLM_TEST_ANTHROPIC_KEY");

  auto unmatched = MakeAnthropicClient(s)->Complete(Ask("other"));
  ASSERT_FALSE(unmatched.ok());
  EXPECT_NE(unmatched.error().find("failed after 1 attempt: HTTP 404"), std::string::npos) << unmatched.error();
}

}  // namespace
}  // namespace kvault::llm
