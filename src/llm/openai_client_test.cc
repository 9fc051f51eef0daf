#include "llm/openai_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "llm/testing/replay_server.h"

namespace kvault::llm {
namespace {

using testing::ReplayServer;

ChatRequest Ask(std::string text, std::string model = "qwen-test") {
  ChatRequest r;
  r.model = std::move(model);
  r.messages = {{"system", "You write kernels."}, {"user", std::move(text)}};
  return r;
}

ClientSettings Fast(const std::string& endpoint) {
  ClientSettings s;
  s.endpoint = endpoint;
  s.backoff_base_s = 0.01;
  s.backoff_cap_s = 0.05;
  s.request_timeout_s = 10;
  s.max_retries = 3;
  return s;
}

#define START_SERVER(var, script)                       \
  auto var##_started = ReplayServer::Start(script);      \
  if (!var##_started) GTEST_SKIP() << var##_started.error(); \
  ReplayServer& var = *var##_started

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

TEST(OpenAiChatUrl, AcceptsTheThreeForms) {
  EXPECT_EQ(*OpenAiChatUrl("http://h:8000"), "http://h:8000/v1/chat/completions");
  EXPECT_EQ(*OpenAiChatUrl("http://h:8000/"), "http://h:8000/v1/chat/completions");
  EXPECT_EQ(*OpenAiChatUrl("http://h:8000/v1"), "http://h:8000/v1/chat/completions");
  EXPECT_EQ(*OpenAiChatUrl("https://api.x.com/openai/v1/"), "https://api.x.com/openai/v1/chat/completions");
  EXPECT_EQ(*OpenAiChatUrl("http://h/v1/chat/completions"), "http://h/v1/chat/completions");
  EXPECT_FALSE(OpenAiChatUrl("").ok());
  EXPECT_NE(OpenAiChatUrl("h:8000").error().find("must start with http://"), std::string::npos);
  EXPECT_FALSE(OpenAiChatUrl("ftp://h/v1").ok());
}

TEST(CheckOpenAiSettings, RejectsNonsense) {
  ClientSettings s = Fast("http://h");
  EXPECT_TRUE(CheckOpenAiSettings(s).ok());
  s.concurrency = 0;
  EXPECT_NE(CheckOpenAiSettings(s).error().find("concurrency"), std::string::npos);
  s = Fast("http://h");
  s.request_timeout_s = 0;
  EXPECT_FALSE(CheckOpenAiSettings(s).ok());
  s = Fast("http://h");
  s.max_retries = -1;
  EXPECT_FALSE(CheckOpenAiSettings(s).ok());
  // and the client reports it instead of calling
  auto r = MakeOpenAiClient(Fast("localhost:1"))->Complete(Ask("x"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("must start with http://"), std::string::npos);
}

TEST(OpenAiWire, RequestBody) {
  ChatRequest r = Ask("hi");
  Json plain = OpenAiRequestBody(r);
  EXPECT_EQ(plain["model"], "qwen-test");
  EXPECT_EQ(plain["messages"][1]["content"], "hi");
  EXPECT_EQ(plain["stream"], false);
  EXPECT_FALSE(plain.contains("temperature") || plain.contains("max_tokens") || plain.contains("seed"));
  r.temperature = 0.5;
  r.max_tokens = 100;
  r.seed = 7;
  Json full = OpenAiRequestBody(r);
  EXPECT_EQ(full["temperature"], 0.5);
  EXPECT_EQ(full["max_tokens"], 100);
  EXPECT_EQ(full["seed"], 7);
}

TEST(OpenAiWire, ParseReply) {
  auto ok = ParseOpenAiReply(Json::parse(R"({"model": "m2", "choices": [{"message": {"content": "hi"},
      "finish_reason": "length"}], "usage": {"prompt_tokens": 3, "completion_tokens": 4}})"), "m1");
  ASSERT_TRUE(ok.ok()) << ok.error();
  EXPECT_EQ(ok->content, "hi");
  EXPECT_EQ(ok->model_requested, "m1");
  EXPECT_EQ(ok->model_returned, "m2");
  EXPECT_EQ(ok->finish_reason, "length");
  EXPECT_EQ(ok->prompt_tokens, 3);
  EXPECT_EQ(ok->completion_tokens, 4);
  auto bare = ParseOpenAiReply(Json::parse(R"({"choices": [{"message": {"content": ""}}], "usage": {"prompt_tokens": -1}})"), "m");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->model_returned, "");
  EXPECT_FALSE(bare->prompt_tokens.has_value());
  EXPECT_FALSE(bare->completion_tokens.has_value());

  auto err = [](const char* text) {
    auto r = ParseOpenAiReply(Json::parse(text), "m");
    return r ? std::string("(accepted)") : r.error();
  };
  EXPECT_EQ(err("[]"), "reply is not a JSON object");
  EXPECT_EQ(err(R"({"choices": []})"), "reply has no choices");
  EXPECT_NE(err(R"({"error": {"message": "overloaded"}})").find("overloaded"), std::string::npos);
  EXPECT_EQ(err(R"({"choices": [5]})"), "reply lacks choices[0].message");
  EXPECT_EQ(err(R"({"choices": [{"message": {"role": "assistant"}}]})"), "reply lacks choices[0].message.content");
  EXPECT_EQ(err(R"({"choices": [{"message": {"content": null}}]})"), "reply lacks choices[0].message.content");
  EXPECT_EQ(err(R"({"choices": [{"message": {"content": 1}}]})"), "reply's choices[0].message.content is not a string");
}

TEST(OpenAiClient, SuccessRecordsUsageModelAndLatency) {
  START_SERVER(server, R"({"rules": [{"match": ["relu"], "responses": [{"content": "```cpp\nk();\n```"}]},
                                     {"match": ["other"], "responses": [{"content": "x", "model": "served-name"}]}]})");
  setenv("KVAULT_LLM_TEST_KEY", "sekrit", 1);
  ClientSettings s = Fast(server.url() + "/v1");
  s.api_key_env = "KVAULT_LLM_TEST_KEY";
  auto client = MakeOpenAiClient(s);
  auto r = client->Complete(Ask("write relu please"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->content, "```cpp\nk();\n```");
  EXPECT_EQ(r->model_requested, "qwen-test");
  EXPECT_EQ(r->model_returned, "qwen-test");
  EXPECT_EQ(r->finish_reason, "stop");
  EXPECT_EQ(r->prompt_tokens, 6);  // words of both messages
  EXPECT_EQ(r->completion_tokens, 3);
  EXPECT_EQ(r->attempts, 1);
  EXPECT_GT(r->latency_s, 0);
  EXPECT_LT(r->latency_s, 10);
  Json record = r->ToJson();
  EXPECT_EQ(record["prompt_tokens"], 6);
  EXPECT_EQ(record["attempts"], 1);

  auto other = client->Complete(Ask("other"));
  ASSERT_TRUE(other.ok()) << other.error();
  EXPECT_EQ(other->model_returned, "served-name");

  auto log = server.Requests();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["path"], "/v1/chat/completions");
  EXPECT_EQ(log[0]["model"], "qwen-test");
  EXPECT_EQ(log[0]["messages"][1]["content"], "write relu please");
  EXPECT_EQ(log[0]["authorization"], "Bearer sekrit");
  unsetenv("KVAULT_LLM_TEST_KEY");
}

TEST(OpenAiClient, NoKeyNoAuthorizationHeader) {
  START_SERVER(server, R"({"default": {"content": "x"}})");
  ClientSettings s = Fast(server.url() + "/v1/chat/completions");
  s.api_key_env = "KVAULT_LLM_TEST_UNSET_KEY";
  ASSERT_TRUE(MakeOpenAiClient(s)->Complete(Ask("a")).ok());
  ASSERT_EQ(server.Requests().size(), 1u);
  EXPECT_TRUE(server.Requests()[0]["authorization"].is_null());
}

TEST(OpenAiClient, RetriesOn429ThenSucceeds) {
  START_SERVER(server, R"({"default": {"content": "never"}, "rules": [{"match": [], "responses":
      [{"status": 429, "retry_after": 0}, {"status": 503}, {"content": "done"}]}]})");
  auto r = MakeOpenAiClient(Fast(server.url()))->Complete(Ask("a"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->content, "done");
  EXPECT_EQ(r->attempts, 3);
  EXPECT_EQ(server.Requests().size(), 3u);
}

TEST(OpenAiClient, HonoursRetryAfter) {
  START_SERVER(server, R"({"rules": [{"match": [], "responses": [{"status": 429, "retry_after": 1}, {"content": "ok"}]}]})");
  ClientSettings s = Fast(server.url());
  s.backoff_base_s = 0;
  auto start = std::chrono::steady_clock::now();
  auto r = MakeOpenAiClient(s)->Complete(Ask("a"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_GE(Seconds(start), 0.95);
  EXPECT_EQ(r->attempts, 2);
}

TEST(OpenAiClient, ServerErrorsExhaustRetries) {
  START_SERVER(server, R"({"default": {"status": 500}})");
  ClientSettings s = Fast(server.url());
  s.max_retries = 2;
  auto r = MakeOpenAiClient(s)->Complete(Ask("a"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "LLM call to " + server.url() +
                           "/v1/chat/completions failed after 3 attempts: HTTP 500: scripted HTTP 500 (x3)");
  EXPECT_EQ(server.Requests().size(), 3u);
}

TEST(OpenAiClient, ClientErrorsAreNotRetried) {
  START_SERVER(server, R"({"rules": [{"match": ["a"], "responses": [{"status": 401}]}]})");
  auto client = MakeOpenAiClient(Fast(server.url()));
  auto r = client->Complete(Ask("a"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("failed after 1 attempt: HTTP 401"), std::string::npos) << r.error();
  auto unmatched = client->Complete(Ask("zzz"));  // no rule, no default: 404
  ASSERT_FALSE(unmatched.ok());
  EXPECT_NE(unmatched.error().find("HTTP 404: no scripted rule"), std::string::npos) << unmatched.error();
  EXPECT_EQ(server.Requests().size(), 2u);
}

TEST(OpenAiClient, TimeoutIsRetriedThenReported) {
  START_SERVER(server, R"({"default": {"delay_s": 3, "content": "late"}})");
  ClientSettings s = Fast(server.url());
  s.request_timeout_s = 0.4;
  s.max_retries = 1;
  auto start = std::chrono::steady_clock::now();
  auto r = MakeOpenAiClient(s)->Complete(Ask("a"));
  ASSERT_FALSE(r.ok());
  EXPECT_LT(Seconds(start), 2.5);
  EXPECT_NE(r.error().find("failed after 2 attempts: timeout (limit 0.4 s"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("(x2)"), std::string::npos) << r.error();
}

TEST(OpenAiClient, TimeoutThenSuccess) {
  START_SERVER(server, R"({"rules": [{"match": [], "responses": [{"delay_s": 2, "content": "late"}, {"content": "ok"}]}]})");
  ClientSettings s = Fast(server.url());
  s.request_timeout_s = 0.5;
  auto r = MakeOpenAiClient(s)->Complete(Ask("a"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->content, "ok");
  EXPECT_EQ(r->attempts, 2);
}

TEST(OpenAiClient, TruncatedJsonIsRetriedABoundedNumberOfTimes) {
  START_SERVER(server, R"({"rules": [{"match": ["always"], "responses": [{"truncate": true, "content": "hello world"}]},
                                     {"match": ["once"], "responses": [{"truncate": true, "content": "a"}, {"content": "whole"}]}]})");
  ClientSettings s = Fast(server.url());
  s.max_retries = 5;
  s.max_truncated_retries = 1;
  auto client = MakeOpenAiClient(s);
  auto r = client->Complete(Ask("always"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("failed after 2 attempts: truncated JSON reply ("), std::string::npos) << r.error();
  auto once = client->Complete(Ask("once"));
  ASSERT_TRUE(once.ok()) << once.error();
  EXPECT_EQ(once->content, "whole");
  EXPECT_EQ(once->attempts, 2);
}

TEST(OpenAiClient, GarbageAndIncompleteRepliesAreErrorsWithoutRetry) {
  START_SERVER(server, R"({"rules": [{"match": ["garbage"], "responses": [{"raw": "<html>oops</html>", "status": 200}]},
      {"match": ["brokenobject"], "responses": [{"raw": "{\"a\": x, \"b\": 1}", "status": 200}]},
      {"match": ["nocontent"], "responses": [{"raw": "{\"choices\": [{\"message\": {\"role\": \"assistant\"}}]}"}]}]})");
  auto client = MakeOpenAiClient(Fast(server.url()));
  auto garbage = client->Complete(Ask("garbage"));
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.error().find("failed after 1 attempt: reply is not JSON"), std::string::npos) << garbage.error();
  EXPECT_NE(garbage.error().find("body starts '<html>oops</html>'"), std::string::npos) << garbage.error();
  auto broken = client->Complete(Ask("brokenobject"));  // invalid before its end: not a cut-off reply
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.error().find("failed after 1 attempt: reply is not JSON"), std::string::npos) << broken.error();
  auto incomplete = client->Complete(Ask("nocontent"));
  ASSERT_FALSE(incomplete.ok());
  EXPECT_NE(incomplete.error().find("failed after 1 attempt: reply lacks choices[0].message.content"),
            std::string::npos) << incomplete.error();
  EXPECT_EQ(server.Requests().size(), 3u);
}

TEST(OpenAiClient, OversizedReplyIsAnError) {
  START_SERVER(server, R"({"default": {"content": "word word word word word word word word word word word"}})");
  ClientSettings s = Fast(server.url());
  s.max_response_bytes = 64;
  auto r = MakeOpenAiClient(s)->Complete(Ask("a"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("failed after 1 attempt: reply larger than 64 bytes"), std::string::npos) << r.error();
}

TEST(OpenAiClient, ConnectionRefusedIsRetriedThenReported) {
  // A port that was free a moment ago and has no listener.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int port = ntohs(addr.sin_port);
  close(fd);
  ClientSettings s = Fast("http://127.0.0.1:" + std::to_string(port));
  s.max_retries = 2;
  auto r = MakeOpenAiClient(s)->Complete(Ask("a"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("failed after 3 attempts: connection failed: "), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("(x3)"), std::string::npos) << r.error();
}

// The most requests the server was answering at one moment, from its log.
int MaxOverlap(const std::vector<Json>& log) {
  std::vector<std::pair<double, int>> events;  // (time, +1 start / -1 done)
  for (const auto& j : log) events.push_back({j["time"].get<double>(), j.contains("done") ? -1 : +1});
  std::sort(events.begin(), events.end(), [](auto& a, auto& b) {
    return a.first != b.first ? a.first < b.first : a.second < b.second;  // done before start
  });
  int now = 0, most = 0;
  for (auto& e : events) most = std::max(most, now += e.second);
  return most;
}

void CallInParallel(ChatClient& client, int threads) {
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&client] { EXPECT_TRUE(client.Complete(Ask("a")).ok()); });
  }
  for (auto& t : pool) t.join();
}

TEST(OpenAiClient, ConcurrencyLimitIsHonoured) {
  START_SERVER(server, R"({"default": {"delay_s": 0.3, "content": "ok"}})");
  ClientSettings s = Fast(server.url());
  s.concurrency = 2;
  auto client = MakeOpenAiClient(s);
  auto start = std::chrono::steady_clock::now();
  CallInParallel(*client, 6);
  EXPECT_GE(Seconds(start), 0.85);  // 6 calls of 0.3 s, two at a time
  auto log = server.Log();
  ASSERT_EQ(log.size(), 12u);
  EXPECT_EQ(MaxOverlap(log), 2);  // never more than 2, and the limit was reached
}

TEST(OpenAiClient, ConcurrencyOfOneSerializes) {
  START_SERVER(server, R"({"default": {"delay_s": 0.1, "content": "ok"}})");
  ClientSettings s = Fast(server.url());
  s.concurrency = 1;
  auto client = MakeOpenAiClient(s);
  CallInParallel(*client, 4);
  EXPECT_EQ(MaxOverlap(server.Log()), 1);
}

}  // namespace
}  // namespace kvault::llm
