#include "llm/http_post.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <string_view>
#include <memory>

namespace kvault::llm {
namespace {

struct Sink {
  std::string* body;
  size_t limit;
  bool overflow = false;
};

size_t Write(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  size_t n = size * count;
  if (sink->body->size() + n > sink->limit) {
    sink->overflow = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  sink->body->append(data, n);
  return n;
}

// Header callback: records a Retry-After given in seconds (an HTTP-date is ignored).
size_t Header(char* data, size_t size, size_t count, void* user) {
  size_t n = size * count;
  std::string_view line(data, n);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size() &&
      std::equal(kName.begin(), kName.end(), line.begin(),
                 [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
    std::string value(line.substr(kName.size()));
    char* end = nullptr;
    double seconds = std::strtod(value.c_str(), &end);
    while (end && (*end == ' ' || *end == '\r' || *end == '\n')) ++end;
    if (end && *end == '\0' && end != value.c_str() && seconds >= 0 && seconds < 1e9) {
      *static_cast<std::optional<double>*>(user) = seconds;
    }
  }
  return n;
}

TransportFailure Classify(CURLcode rc) {
  switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
      return TransportFailure::kTimeout;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return TransportFailure::kConnect;
    default:
      return TransportFailure::kOther;
  }
}

}  // namespace

HttpReply PostJson(const CurlApi& curl, const HttpPost& post) {
  HttpReply reply;
  std::unique_ptr<CURL, void (*)(CURL*)> handle(curl.easy_init(), curl.easy_cleanup);
  if (!handle) {
    reply.failure = TransportFailure::kOther;
    reply.failure_message = "curl_easy_init failed";
    return reply;
  }
  curl_slist* headers = curl.slist_append(nullptr, "Content-Type: application/json");
  for (const auto& h : post.headers) headers = curl.slist_append(headers, h.c_str());
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> header_guard(headers, curl.slist_free_all);

  Sink sink{&reply.body, post.max_response_bytes};
  CURL* h = handle.get();
  curl.easy_setopt(h, CURLOPT_URL, post.url.c_str());
  curl.easy_setopt(h, CURLOPT_POST, 1L);
  curl.easy_setopt(h, CURLOPT_POSTFIELDS, post.body.data());
  curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(post.body.size()));
  curl.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM: safe in threads
  curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(post.connect_timeout_s * 1000));
  curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(post.total_timeout_s * 1000));
  curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, &Write);
  curl.easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  curl.easy_setopt(h, CURLOPT_HEADERFUNCTION, &Header);
  curl.easy_setopt(h, CURLOPT_HEADERDATA, &reply.retry_after_s);
  curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl.easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // whatever the build decodes

  auto start = std::chrono::steady_clock::now();
  CURLcode rc = curl.easy_perform(h);
  reply.latency_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (sink.overflow) {
    reply.failure = TransportFailure::kTooLarge;
    reply.failure_message = "reply larger than " + std::to_string(post.max_response_bytes) + " bytes";
    return reply;
  }
  if (rc != CURLE_OK) {
    reply.failure = Classify(rc);
    reply.failure_message = curl.easy_strerror(rc);
    return reply;
  }
  curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &reply.status);
  return reply;
}

}  // namespace kvault::llm
