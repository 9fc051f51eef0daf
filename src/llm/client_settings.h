#pragma once
// Settings shared by the LLM clients (openai_client.h, anthropic_client.h), and the
// bound on calls in flight. Every field has its default beside it.
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>

#include "util/result.h"

namespace kvault::llm {

struct ClientSettings {
  // Where the server listens. OpenAI: `http://host:port` (-> /v1/chat/completions is
  // appended), any URL with a path (`.../v1`, `.../openai/v1`: -> /chat/completions
  // is appended), or the full `.../chat/completions`. Anthropic: `https://host`
  // (-> /v1/messages), `.../v1` (-> /messages) or the full `.../v1/messages`.
  // http:// and https:// only. No default: required.
  std::string endpoint;
  // The environment variable holding the API key. Default "": OpenAI tries
  // KVAULT_API_KEY, then OPENAI_API_KEY; Anthropic tries KVAULT_API_KEY, then
  // ANTHROPIC_API_KEY. No key found: no credential is sent (local servers need none).
  std::string api_key_env;
  double connect_timeout_s = 10;     // TCP (+TLS) connect, per HTTP call
  double request_timeout_s = 600;    // whole HTTP call, response included
  int max_retries = 4;               // further HTTP calls after the first, at most
  int max_truncated_retries = 2;     // of those, for a 200 reply whose JSON was cut short
  double backoff_base_s = 1;         // before retry k: min(cap, base * 2^(k-1)) * U(0.5, 1)
  double backoff_cap_s = 30;
  double max_retry_after_s = 120;    // a server's Retry-After is honoured up to this
  int concurrency = 4;               // HTTP calls in flight at once, per client (>= 1)
  size_t max_response_bytes = 16 << 20;  // a longer reply is an error, not retried
};

// Error for a non-positive timeout, concurrency or max_response_bytes, or negative
// retries or backoff times. The endpoint is checked by each client's own function.
Status CheckLimits(const ClientSettings& settings);

// The endpoint with trailing slashes removed, and whether it has a path after the
// host. Error for an empty endpoint or a scheme other than http:// or https://.
struct BaseUrlParts {
  std::string url;
  bool has_path = false;
};
Result<BaseUrlParts> BaseUrl(std::string_view endpoint);

// The API key: the value of `variable` when it is named, else of KVAULT_API_KEY, else
// of `provider_variable`; "" when none is set (or all are empty).
std::string ApiKeyFromEnv(const std::string& variable, const std::string& provider_variable);

// A counting semaphore for CallSlots::Hold. Thread-safe.
class CallSlots {
 public:
  explicit CallSlots(int slots) : free_(slots < 1 ? 1 : slots) {}
  // Holds one slot for the lifetime of the guard.
  class Hold {
   public:
    explicit Hold(CallSlots& s) : s_(s) {
      std::unique_lock lock(s_.mu_);
      s_.cv_.wait(lock, [&] { return s_.free_ > 0; });
      --s_.free_;
    }
    ~Hold() {
      {
        std::lock_guard lock(s_.mu_);
        ++s_.free_;
      }
      s_.cv_.notify_one();
    }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    CallSlots& s_;
  };

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int free_;
};

}  // namespace kvault::llm
