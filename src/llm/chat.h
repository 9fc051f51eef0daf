#pragma once
// The chat-completion seam between the agent loop (src/agent) and LLM servers.
//
//   auto client = MakeOpenAiClient(settings);            // src/llm/openai_client.h
//   ChatRequest req{.model = "qwen", .messages = {{"system", s}, {"user", u}}};
//   Result<ChatResponse> r = client->Complete(req);      // retries inside
//   if (!r) -> the call failed for good (r.error() says why: timeout, HTTP 500 x N...)
//
// Every implementation is thread-safe: the agent calls Complete from several threads
// and the client bounds how many calls are in flight (ClientSettings::concurrency).
#include <optional>
#include <string>
#include <vector>

#include "util/json.h"
#include "util/result.h"

namespace kvault::llm {

struct ChatMessage {
  std::string role;  // "system" | "user" | "assistant"
  std::string content;
};

struct ChatRequest {
  std::string model;
  std::vector<ChatMessage> messages;
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  std::optional<int> seed;
};

// What came back, with the provenance the store keeps.
struct ChatResponse {
  std::string content;          // the assistant message text (may be empty)
  std::string model_requested;
  std::string model_returned;   // the server's "model" field ("" when absent)
  std::string finish_reason;    // "stop", "length", ... ("" when absent)
  std::optional<int> prompt_tokens;
  std::optional<int> completion_tokens;
  double latency_s = 0;         // of the successful HTTP call
  int attempts = 1;             // HTTP calls made, retries included
  Json ToJson() const;
};

class ChatClient {
 public:
  virtual ~ChatClient() = default;
  // One chat completion. Never throws; an Error after retries are exhausted or for
  // an error that retrying cannot fix (HTTP 400/401/404, a reply that is not JSON).
  virtual Result<ChatResponse> Complete(const ChatRequest& request) = 0;
};

}  // namespace kvault::llm
