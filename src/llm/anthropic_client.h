#pragma once
// The Anthropic messages-API client (POST <base>/v1/messages). Same contract as the
// OpenAI client (openai_client.h): thread-safe, never throws, retries inside.
//
//   ClientSettings s{.endpoint = "https://api.anthropic.com"};   // key: ANTHROPIC_API_KEY
//   std::unique_ptr<ChatClient> client = MakeAnthropicClient(s);
//
// Differences the client hides: the key goes in `x-api-key` with an
// `anthropic-version` header; system messages travel in the top-level `system` field
// (joined by blank lines); `max_tokens` is required (kDefaultAnthropicMaxTokens when
// the request has none); `seed` is not sent; the answer is the concatenated `text`
// blocks of `content`; `stop_reason` is the finish reason; usage is `input_tokens` /
// `output_tokens`. HTTP 529 (overloaded) is retried like every 5xx.
#include <memory>
#include <string>
#include <string_view>

#include "llm/chat.h"
#include "llm/client_settings.h"

namespace kvault::llm {

inline constexpr int kDefaultAnthropicMaxTokens = 8192;
inline constexpr const char* kAnthropicVersion = "2023-06-01";

// https://host -> https://host/v1/messages; .../v1 -> .../v1/messages; a URL that
// ends in /messages is taken as is.
Result<std::string> AnthropicMessagesUrl(std::string_view endpoint);
Status CheckAnthropicSettings(const ClientSettings& settings);
std::unique_ptr<ChatClient> MakeAnthropicClient(const ClientSettings& settings);

// The wire format, exposed for tests.
Json AnthropicRequestBody(const ChatRequest& request);
Result<ChatResponse> ParseAnthropicReply(const Json& reply, const std::string& model_requested);

}  // namespace kvault::llm
