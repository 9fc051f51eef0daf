#pragma once
// One HTTP POST of a JSON body through libcurl, with the failures sorted into the kinds
// the retry loop needs. No retries here. Thread-safe (one curl handle per call).
#include <optional>
#include <string>
#include <vector>

#include "llm/curl_library.h"

namespace kvault::llm {

struct HttpPost {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"; Content-Type is added
  std::string body;
  double connect_timeout_s = 10;
  double total_timeout_s = 600;
  size_t max_response_bytes = 16 << 20;
};

enum class TransportFailure {
  kNone,      // a response arrived (any status)
  kConnect,   // could not connect, or the connection broke: worth retrying
  kTimeout,   // connect or total timeout: worth retrying
  kTooLarge,  // the response passed max_response_bytes
  kOther,     // anything else (bad URL, unsupported protocol): not worth retrying
};

struct HttpReply {
  TransportFailure failure = TransportFailure::kNone;
  std::string failure_message;        // when failure != kNone
  long status = 0;                    // when failure == kNone
  std::string body;
  std::optional<double> retry_after_s;  // the Retry-After header, in seconds
  double latency_s = 0;
};

HttpReply PostJson(const CurlApi& curl, const HttpPost& post);

}  // namespace kvault::llm
