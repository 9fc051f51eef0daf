#include "llm/openai_client.h"

#include <vector>

#include "llm/retry_loop.h"

namespace kvault::llm {
namespace {

std::string StringField(const Json& object, const char* field) {
  if (!object.is_object()) return "";
  auto it = object.find(field);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

class OpenAiClient final : public ChatClient {
 public:
  explicit OpenAiClient(const ClientSettings& settings)
      : settings_(settings), slots_(settings.concurrency), api_key_(ApiKeyFromEnv(settings.api_key_env, "OPENAI_API_KEY")) {}

  Result<ChatResponse> Complete(const ChatRequest& request) override {
    if (Status ok = CheckOpenAiSettings(settings_); !ok) return Error{ok.error()};
    std::vector<std::string> headers;
    if (!api_key_.empty()) headers.push_back("Authorization: Bearer " + api_key_);
    return CallWithRetries(settings_, slots_, *OpenAiChatUrl(settings_.endpoint), std::move(headers),
                           OpenAiRequestBody(request),
                           [&](const Json& reply) { return ParseOpenAiReply(reply, request.model); });
  }

 private:
  const ClientSettings settings_;
  CallSlots slots_;
  const std::string api_key_;
};

}  // namespace

Result<std::string> OpenAiChatUrl(std::string_view endpoint) {
  auto base = BaseUrl(endpoint);
  if (!base) return Error{base.error()};
  if (base->url.ends_with("/chat/completions")) return base->url;
  return base->url + (base->has_path ? "/chat/completions" : "/v1/chat/completions");
}

Status CheckOpenAiSettings(const ClientSettings& s) {
  if (auto url = OpenAiChatUrl(s.endpoint); !url) return Error{url.error()};
  return CheckLimits(s);
}

std::unique_ptr<ChatClient> MakeOpenAiClient(const ClientSettings& settings) {
  return std::make_unique<OpenAiClient>(settings);
}

Json OpenAiRequestBody(const ChatRequest& request) {
  Json messages = Json::array();
  for (const auto& m : request.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  Json body{{"model", request.model}, {"messages", std::move(messages)}, {"stream", false}};
  if (request.temperature) body["temperature"] = *request.temperature;
  if (request.max_tokens) body["max_tokens"] = *request.max_tokens;
  if (request.seed) body["seed"] = *request.seed;
  return body;
}

Result<ChatResponse> ParseOpenAiReply(const Json& reply, const std::string& model_requested) {
  if (!reply.is_object()) return Error{"reply is not a JSON object"};
  auto choices = reply.find("choices");
  if (choices == reply.end() || !choices->is_array() || choices->empty()) {
    std::string why = "reply has no choices";
    if (auto e = reply.find("error"); e != reply.end()) why += " (error: " + e->dump().substr(0, 200) + ")";
    return Error{why};
  }
  const Json& choice = (*choices)[0];
  auto message = choice.is_object() ? choice.find("message") : choice.end();
  if (!choice.is_object() || message == choice.end() || !message->is_object()) {
    return Error{"reply lacks choices[0].message"};
  }
  auto content = message->find("content");
  if (content == message->end() || content->is_null()) {
    return Error{"reply lacks choices[0].message.content"};
  }
  if (!content->is_string()) return Error{"reply's choices[0].message.content is not a string"};
  ChatResponse r;
  r.content = content->get<std::string>();
  r.model_requested = model_requested;
  r.model_returned = StringField(reply, "model");
  r.finish_reason = StringField(choice, "finish_reason");
  if (auto usage = reply.find("usage"); usage != reply.end()) {
    r.prompt_tokens = UsageCount(*usage, "prompt_tokens");
    r.completion_tokens = UsageCount(*usage, "completion_tokens");
  }
  return r;
}

}  // namespace kvault::llm
