#pragma once
// The retry loop shared by the LLM clients: one HTTP call per attempt, each inside a
// concurrency slot; retries with backoff on connection errors, timeouts, HTTP 408,
// 429 and 5xx (honouring Retry-After), and a bounded number of times on a 200 reply
// whose JSON was cut short; never on other 4xx or a reply that is not JSON.
// Thread-safe.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "llm/chat.h"
#include "llm/client_settings.h"
#include "llm/curl_library.h"
#include "llm/http_post.h"

namespace kvault::llm {

// The provider-specific half: turns a 2xx reply's JSON into a response (Error: what
// the reply lacked, e.g. "reply lacks choices[0].message.content").
using ReplyParser = std::function<Result<ChatResponse>(const Json& reply)>;

// For parsers: usage[field] when it is an integer in [0, INT32_MAX], else nullopt.
std::optional<int> UsageCount(const Json& usage, const char* field);

// Calls `post` until it succeeds or the settings' retry budget is spent. The Error
// names the URL, the number of attempts and what each went wrong with, e.g.
// "LLM call to http://h/v1/chat/completions failed after 5 attempts: HTTP 500 (x5): boom".
Result<ChatResponse> PostWithRetries(const CurlApi& curl, const ClientSettings& settings,
                                     CallSlots& slots, const HttpPost& post,
                                     const ReplyParser& parse);

// One provider call: loads libcurl, POSTs `body` to `url` with `headers` and the
// settings' timeouts and size cap, through PostWithRetries. Never throws: an
// exception becomes an Error "LLM call failed: ...".
Result<ChatResponse> CallWithRetries(const ClientSettings& settings, CallSlots& slots,
                                     std::string url, std::vector<std::string> headers,
                                     const Json& body, const ReplyParser& parse);

// Seconds to wait before retry number `retry` (1-based): a server's Retry-After (up
// to max_retry_after_s) when given, else min(cap, base * 2^(retry-1)) scaled by
// `jitter` in [0.5, 1].
double BackoffSeconds(const ClientSettings& settings, int retry, std::optional<double> retry_after_s,
                      double jitter);

// The message inside an error reply's body ({"error": {"message": ...}},
// {"error": "..."} or {"message": ...}), else the body's first 200 bytes, one line.
std::string ErrorMessageOfBody(const std::string& body);

}  // namespace kvault::llm
