#include "llm/retry_loop.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cmath>
#include <exception>
#include <random>
#include <thread>
#include <vector>

#include "util/json_parse.h"
#include "util/strings.h"

namespace kvault::llm {
namespace {

enum class Verdict { kSuccess, kRetry, kRetryTruncated, kFatal };

struct Attempt {
  Verdict verdict = Verdict::kFatal;
  std::string problem;  // one short phrase, e.g. "HTTP 500: boom"
  std::optional<double> retry_after_s;
  std::optional<ChatResponse> response;
};

bool RetryableStatus(long status) { return status == 408 || status == 429 || status >= 500; }

std::string OneLine(std::string s, size_t max) {
  if (s.size() > max) s = s.substr(0, max) + "...";
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return s;
}

std::string FormatSeconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

// True when `body` is a cut-off start of JSON: the parser fails only at its end.
// REQUIRES: ParseJson(body) failed.
bool EndsTooEarly(const std::string& body) {
  if (Trim(body).empty() || JsonNestingDepth(body) > 64) return false;
  try {
    Json parsed = Json::parse(body);
    return false;
  } catch (const Json::parse_error& e) {
    return e.byte >= body.size();
  } catch (const Json::exception&) {
  }
  return false;
}

Attempt Judge(const HttpReply& reply, const HttpPost& post, const ReplyParser& parse) {
  Attempt a;
  switch (reply.failure) {
    case TransportFailure::kNone:
      break;
    case TransportFailure::kTimeout:
      a.verdict = Verdict::kRetry;
      a.problem = "timeout (limit " + FormatSeconds(post.total_timeout_s) + ", connect " +
                  FormatSeconds(post.connect_timeout_s) + ")";
      return a;
    case TransportFailure::kConnect:
      a.verdict = Verdict::kRetry;
      a.problem = "connection failed: " + reply.failure_message;
      return a;
    case TransportFailure::kTooLarge:
    case TransportFailure::kOther:
      a.problem = reply.failure_message;
      return a;
  }
  if (reply.status < 200 || reply.status >= 300) {
    a.verdict = RetryableStatus(reply.status) ? Verdict::kRetry : Verdict::kFatal;
    a.problem = "HTTP " + std::to_string(reply.status);
    if (std::string m = ErrorMessageOfBody(reply.body); !m.empty()) a.problem += ": " + m;
    a.retry_after_s = reply.retry_after_s;
    return a;
  }
  auto json = ParseJson(reply.body, 64);
  if (!json) {
    bool truncated = EndsTooEarly(reply.body);
    a.verdict = truncated ? Verdict::kRetryTruncated : Verdict::kFatal;
    a.problem = (truncated ? "truncated JSON reply (" : "reply is not JSON (") +
                std::to_string(reply.body.size()) + " bytes; " + OneLine(json.error(), 160) +
                "; body starts '" + OneLine(reply.body, 80) + "')";
    return a;
  }
  auto response = parse(*json);
  if (!response) {
    a.problem = response.error();
    return a;
  }
  response->latency_s = reply.latency_s;
  a.verdict = Verdict::kSuccess;
  a.response = std::move(*response);
  return a;
}

// "HTTP 500 (x3), timeout (...)": consecutive repeats folded.
std::string Summarize(const std::vector<std::string>& problems) {
  std::string out;
  for (size_t i = 0; i < problems.size();) {
    size_t j = i;
    while (j < problems.size() && problems[j] == problems[i]) ++j;
    if (!out.empty()) out += "; ";
    out += problems[i];
    if (j - i > 1) out += " (x" + std::to_string(j - i) + ")";
    i = j;
  }
  return out;
}

double Jitter() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.5, 1.0)(rng);
}

}  // namespace

std::optional<int> UsageCount(const Json& usage, const char* field) {
  if (!usage.is_object()) return std::nullopt;
  auto it = usage.find(field);
  if (it == usage.end() || !it->is_number_integer()) return std::nullopt;
  auto v = it->get<int64_t>();
  if (v < 0 || v > INT32_MAX) return std::nullopt;
  return static_cast<int>(v);
}

double BackoffSeconds(const ClientSettings& settings, int retry, std::optional<double> retry_after_s,
                      double jitter) {
  if (retry_after_s) return std::clamp(*retry_after_s, 0.0, settings.max_retry_after_s);
  double exp = settings.backoff_base_s * std::pow(2.0, std::max(0, retry - 1));
  return std::min(settings.backoff_cap_s, exp) * std::clamp(jitter, 0.5, 1.0);
}

std::string ErrorMessageOfBody(const std::string& body) {
  if (auto json = ParseJson(body, 16); json && json->is_object()) {
    auto error = json->find("error");
    if (error != json->end() && error->is_object()) {
      auto m = error->find("message");
      if (m != error->end() && m->is_string()) return OneLine(m->get<std::string>(), 200);
    }
    if (error != json->end() && error->is_string()) return OneLine(error->get<std::string>(), 200);
    auto m = json->find("message");
    if (m != json->end() && m->is_string()) return OneLine(m->get<std::string>(), 200);
  }
  return OneLine(body.substr(0, 201), 200);
}

Result<ChatResponse> PostWithRetries(const CurlApi& curl, const ClientSettings& settings,
                                     CallSlots& slots, const HttpPost& post,
                                     const ReplyParser& parse) {
  std::vector<std::string> problems;
  int truncated_retries = 0;
  for (int attempt = 1;; ++attempt) {
    Attempt a;
    {
      CallSlots::Hold hold(slots);
      a = Judge(PostJson(curl, post), post, parse);
    }
    if (a.verdict == Verdict::kSuccess) {
      a.response->attempts = attempt;
      return std::move(*a.response);
    }
    problems.push_back(a.problem);
    bool retry = (a.verdict == Verdict::kRetry ||
                  (a.verdict == Verdict::kRetryTruncated && truncated_retries < settings.max_truncated_retries)) &&
                 attempt <= settings.max_retries;
    if (!retry) {
      return Error{"LLM call to " + post.url + " failed after " + std::to_string(attempt) +
                   (attempt == 1 ? " attempt: " : " attempts: ") + Summarize(problems)};
    }
    if (a.verdict == Verdict::kRetryTruncated) ++truncated_retries;
    double wait = BackoffSeconds(settings, attempt, a.retry_after_s, Jitter());
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
}

Result<ChatResponse> CallWithRetries(const ClientSettings& settings, CallSlots& slots,
                                     std::string url, std::vector<std::string> headers,
                                     const Json& body, const ReplyParser& parse) {
  try {
    auto curl = LoadCurl();
    if (!curl) return Error{curl.error()};
    HttpPost post;
    post.url = std::move(url);
    post.headers = std::move(headers);
    post.body = DumpJson(body);
    post.connect_timeout_s = settings.connect_timeout_s;
    post.total_timeout_s = settings.request_timeout_s;
    post.max_response_bytes = settings.max_response_bytes;
    return PostWithRetries(**curl, settings, slots, post, parse);
  } catch (const std::exception& e) {
    return Error{std::string("LLM call failed: ") + e.what()};
  }
}

}  // namespace kvault::llm
