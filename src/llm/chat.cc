#include "llm/chat.h"

namespace kvault::llm {

Json ChatResponse::ToJson() const {
  auto optional_int = [](const std::optional<int>& v) { return v ? Json(*v) : Json(nullptr); };
  return Json{{"model_requested", model_requested},
              {"model_returned", model_returned},
              {"finish_reason", finish_reason},
              {"prompt_tokens", optional_int(prompt_tokens)},
              {"completion_tokens", optional_int(completion_tokens)},
              {"latency_s", latency_s},
              {"attempts", attempts}};
}

}  // namespace kvault::llm
