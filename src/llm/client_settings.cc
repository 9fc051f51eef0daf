#include "llm/client_settings.h"

#include <vector>

#include "util/env.h"
#include "util/env_vars.h"

namespace kvault::llm {

Status CheckLimits(const ClientSettings& s) {
  if (!(s.connect_timeout_s > 0) || !(s.request_timeout_s > 0)) {
    return Error{"LLM timeouts must be positive"};
  }
  if (s.concurrency < 1) return Error{"LLM concurrency must be at least 1"};
  if (s.max_retries < 0 || s.max_truncated_retries < 0) return Error{"LLM retries must not be negative"};
  if (!(s.backoff_base_s >= 0) || !(s.backoff_cap_s >= 0) || !(s.max_retry_after_s >= 0)) {
    return Error{"LLM backoff times must not be negative"};
  }
  if (s.max_response_bytes == 0) return Error{"LLM max_response_bytes must be positive"};
  return Status::Ok();
}

Result<BaseUrlParts> BaseUrl(std::string_view endpoint) {
  std::string url(endpoint);
  if (url.empty()) return Error{"no LLM endpoint given (e.g. http://127.0.0.1:8000/v1)"};
  size_t scheme = url.find("://");
  std::string proto = scheme == std::string::npos ? "" : url.substr(0, scheme);
  if (proto != "http" && proto != "https") {
    return Error{"LLM endpoint '" + url + "' must start with http:// or https://"};
  }
  if (url.size() == scheme + 3 || url[scheme + 3] == '/') {
    return Error{"LLM endpoint '" + url + "' names no host"};
  }
  while (url.size() > scheme + 3 && url.back() == '/') url.pop_back();
  bool has_path = url.find('/', scheme + 3) != std::string::npos;
  return BaseUrlParts{std::move(url), has_path};
}

std::string ApiKeyFromEnv(const std::string& variable, const std::string& provider_variable) {
  if (variable.empty())
    if (auto v = KvaultEnv("KVAULT_API_KEY"); v && !v->empty()) return *v;
  if (auto v = GetEnv(variable.empty() ? provider_variable : variable); v && !v->empty()) return *v;
  return "";
}

}  // namespace kvault::llm
