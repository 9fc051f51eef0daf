#pragma once
// The OpenAI chat-completions client (vLLM, SGLang, llama.cpp's server, Ollama, cloud
// APIs: docs/llm-servers.md). Thread-safe; never throws.
//
//   ClientSettings s{.endpoint = "http://127.0.0.1:8000/v1"};
//   if (Status ok = CheckOpenAiSettings(s); !ok) -> a usage error
//   std::unique_ptr<ChatClient> client = MakeOpenAiClient(s);
//   Result<ChatResponse> r = client->Complete(request);
#include <memory>
#include <string>
#include <string_view>

#include "llm/chat.h"
#include "llm/client_settings.h"

namespace kvault::llm {

// The chat-completions URL for an endpoint (see ClientSettings::endpoint). Error for
// an empty endpoint or a scheme other than http:// or https://.
Result<std::string> OpenAiChatUrl(std::string_view endpoint);

// Error for a bad endpoint, a non-positive timeout or concurrency, negative retries.
Status CheckOpenAiSettings(const ClientSettings& settings);

// The client. With settings that CheckOpenAiSettings rejects, or without libcurl,
// every Complete returns that Error.
std::unique_ptr<ChatClient> MakeOpenAiClient(const ClientSettings& settings);

// The wire format, exposed for tests. The request body: model, messages, stream false,
// and temperature / max_tokens / seed when set.
Json OpenAiRequestBody(const ChatRequest& request);
// A 2xx reply's JSON -> response (content, model, finish_reason, usage). Error naming
// what is missing: no choices, no choices[0].message.content, content not a string.
Result<ChatResponse> ParseOpenAiReply(const Json& reply, const std::string& model_requested);

}  // namespace kvault::llm
