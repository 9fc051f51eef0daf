#include "llm/anthropic_client.h"

#include <cstdint>
#include <vector>

#include "llm/retry_loop.h"

namespace kvault::llm {
namespace {

class AnthropicClient final : public ChatClient {
 public:
  explicit AnthropicClient(const ClientSettings& settings)
      : settings_(settings),
        slots_(settings.concurrency),
        api_key_(ApiKeyFromEnv(settings.api_key_env, "ANTHROPIC_API_KEY")) {}

  Result<ChatResponse> Complete(const ChatRequest& request) override {
    if (Status ok = CheckAnthropicSettings(settings_); !ok) return Error{ok.error()};
    std::vector<std::string> headers{std::string("anthropic-version: ") + kAnthropicVersion};
    if (!api_key_.empty()) headers.push_back("x-api-key: " + api_key_);
    return CallWithRetries(settings_, slots_, *AnthropicMessagesUrl(settings_.endpoint),
                           std::move(headers), AnthropicRequestBody(request),
                           [&](const Json& reply) { return ParseAnthropicReply(reply, request.model); });
  }

 private:
  const ClientSettings settings_;
  CallSlots slots_;
  const std::string api_key_;
};

}  // namespace

Result<std::string> AnthropicMessagesUrl(std::string_view endpoint) {
  auto base = BaseUrl(endpoint);
  if (!base) return Error{base.error()};
  if (base->url.ends_with("/messages")) return base->url;
  return base->url + (base->url.ends_with("/v1") ? "/messages" : "/v1/messages");
}

Status CheckAnthropicSettings(const ClientSettings& s) {
  if (auto url = AnthropicMessagesUrl(s.endpoint); !url) return Error{url.error()};
  return CheckLimits(s);
}

std::unique_ptr<ChatClient> MakeAnthropicClient(const ClientSettings& settings) {
  return std::make_unique<AnthropicClient>(settings);
}

Json AnthropicRequestBody(const ChatRequest& request) {
  std::string system;
  Json messages = Json::array();
  for (const auto& m : request.messages) {
    if (m.role == "system") {
      system += (system.empty() ? "" : "\n\n") + m.content;
    } else {
      messages.push_back({{"role", m.role}, {"content", m.content}});
    }
  }
  Json body{{"model", request.model},
            {"messages", std::move(messages)},
            {"max_tokens", request.max_tokens.value_or(kDefaultAnthropicMaxTokens)}};
  if (!system.empty()) body["system"] = system;
  if (request.temperature) body["temperature"] = *request.temperature;
  return body;
}

Result<ChatResponse> ParseAnthropicReply(const Json& reply, const std::string& model_requested) {
  if (!reply.is_object()) return Error{"reply is not a JSON object"};
  auto content = reply.find("content");
  if (content == reply.end() || !content->is_array()) {
    std::string why = "reply lacks a content array";
    if (auto e = reply.find("error"); e != reply.end()) why += " (error: " + e->dump().substr(0, 200) + ")";
    return Error{why};
  }
  ChatResponse r;
  bool any_text = false;
  for (const auto& block : *content) {
    if (!block.is_object()) continue;
    auto type = block.find("type");
    auto text = block.find("text");
    if (type != block.end() && *type == "text" && text != block.end() && text->is_string()) {
      r.content += text->get<std::string>();
      any_text = true;
    }
  }
  if (!any_text) return Error{"reply's content has no text block"};
  r.model_requested = model_requested;
  if (auto m = reply.find("model"); m != reply.end() && m->is_string()) r.model_returned = *m;
  if (auto f = reply.find("stop_reason"); f != reply.end() && f->is_string()) r.finish_reason = *f;
  if (auto usage = reply.find("usage"); usage != reply.end()) {
    r.prompt_tokens = UsageCount(*usage, "input_tokens");
    r.completion_tokens = UsageCount(*usage, "output_tokens");
  }
  return r;
}

}  // namespace kvault::llm
