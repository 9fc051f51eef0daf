#include "serve/http_server.h"

#include <httplib.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>

#include "kvault/build_config.h"
#include "serve/connection_gate.h"
#include "util/json_parse.h"

namespace kvault::serve {
namespace {

using httplib::Request;
using httplib::Response;

// How long a batch stays answerable after its last candidate ended, and how many
// batches are kept at most (the oldest finished ones go first).
constexpr auto kKeepBatch = std::chrono::hours(1);
constexpr size_t kMaxBatches = 10000;
// Longest wait a poll may ask for (?wait_s=).
constexpr double kMaxPollWaitS = 300;
// How often a stream checks that its client is still there.
constexpr auto kStreamTick = std::chrono::seconds(1);
// Retry-After of an answer whose candidate met an infrastructure failure.
constexpr const char* kRetryAfterInfraS = "5";

// A batch: its requests (the reward asked for, the trajectory so far) and their jobs.
struct Batch {
  std::vector<ServeRequest> requests;
  std::vector<std::shared_ptr<Job>> jobs;
  std::vector<bool> shared;  // VerificationService::Submitted::shared
  Clock::time_point created = Clock::now();
};

std::string RandomId(const char* prefix) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[40];
  std::snprintf(buf, sizeof buf, "%s%016llx", prefix, static_cast<unsigned long long>(rng()));
  return buf;
}

void SendJson(Response& res, int code, const Json& body) {
  res.status = code;
  res.set_content(DumpJson(body) + "\n", "application/json");
}

void SendError(Response& res, int code, ErrorKind kind, const std::string& message, int retry_after_s = 0) {
  if (retry_after_s > 0) res.set_header("Retry-After", std::to_string(retry_after_s));
  SendJson(res, code, {{"error", {{"kind", std::string(ToString(kind))}, {"message", message}}}});
}

// The body as JSON, or a 400 already sent.
std::optional<Json> ReadBody(const Request& req, Response& res) {
  auto j = ParseJson(req.body);
  if (!j) {
    SendError(res, 400, ErrorKind::kBadRequest, "the body is not valid JSON: " + j.error());
    return std::nullopt;
  }
  return std::move(*j);
}

bool TimingSafeEqual(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i % std::max<size_t>(1, b.size())]);
  return diff == 0;
}

// The HTTP code of a refusal to queue work.
int RefusalCode(VerificationService::Refusal why) {
  switch (why) {
    case VerificationService::Refusal::kOverloaded: return 429;
    case VerificationService::Refusal::kConflict: return 409;
    case VerificationService::Refusal::kUnsupported: return 422;
    default: return 503;
  }
}

ErrorKind RefusalKind(VerificationService::Refusal why) {
  switch (why) {
    case VerificationService::Refusal::kOverloaded: return ErrorKind::kOverloaded;
    case VerificationService::Refusal::kConflict: return ErrorKind::kConflict;
    case VerificationService::Refusal::kStopping: return ErrorKind::kStopping;
    case VerificationService::Refusal::kUnsupported: return ErrorKind::kUnsupported;
    default: return ErrorKind::kUnavailable;
  }
}

// The HTTP code of one finished candidate answered alone: its outcome is 200 unless
// it has no reward for a reason the client must see.
int OutcomeCode(const ServeOutcome& o) {
  if (!o.error_kind) return 200;
  switch (*o.error_kind) {
    case ErrorKind::kInfrastructure: return 503;
    case ErrorKind::kTask: return 422;
    case ErrorKind::kUnsupported: return 422;
    case ErrorKind::kDeadline: return 504;
    case ErrorKind::kCancelled: return 409;
    default: return 200;
  }
}

}  // namespace

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

struct HttpServer::Impl {
  HttpSettings settings;
  VerificationService* service = nullptr;  // set by Listen, before any request is read
  ConnectionGate gate;                     // outlives the server, whose queue it makes
  httplib::Server server;
  std::mutex mu;                                   // guards batches
  std::map<std::string, std::shared_ptr<Batch>> batches;
  int listen_fd = -1;                              // the socket Bind() bound

  explicit Impl(HttpSettings s)
      : settings(std::move(s)), gate(GateSettings{settings.max_connections, settings.read_deadline}) {}

  // --- plumbing ---------------------------------------------------------------
  void Route() {
    server.new_task_queue = [this] { return gate.NewQueue(); };
    server.set_payload_max_length(settings.max_body_bytes);
    // Each read's own bound; the request's total is the gate's deadline.
    server.set_read_timeout(std::min<std::chrono::milliseconds>(settings.read_deadline, std::chrono::seconds(60)));
    server.set_write_timeout(60);
    // Not cpp-httplib's own options: they set SO_REUSEPORT, under which a second
    // server binds a port this one serves and the kernel splits the connections
    // between them. The socket is kept to raise its backlog once bound (Bind).
    server.set_socket_options([this](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      listen_fd = sock;
    });
    server.set_pre_routing_handler([this](const Request& req, Response& res) { return Authorize(req, res); });
    server.set_error_handler([this](const Request& req, Response& res) { OnError(req, res); });
    server.set_exception_handler([](const Request&, Response& res, std::exception_ptr ep) {
      std::string what = "unknown";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      SendError(res, 500, ErrorKind::kInternal, "the server failed on this request: " + what);
    });
    server.set_logger([this](const Request& req, const Response& res) {
      service->metrics().CountRequest(EndpointLabel(req), res.status);
      LogRequest(req, res);
      ConnectionGate::Reading();  // keep-alive: the connection's next request is read now
    });

    PostJson("/v1/verify", &Impl::VerifyOne);
    PostJson("/v1/batches", &Impl::SubmitBatch);
    server.Get(R"(/v1/batches/([A-Za-z0-9-]{1,64}))", [this](const Request& q, Response& r) { PollBatch(q, r); });
    server.Get(R"(/v1/batches/([A-Za-z0-9-]{1,64})/stream)", [this](const Request& q, Response& r) { StreamBatch(q, r); });
    server.Delete(R"(/v1/batches/([A-Za-z0-9-]{1,64}))", [this](const Request& q, Response& r) { CancelBatch(q, r); });
    server.Get("/v1/health", [this](const Request& q, Response& r) { HealthAnswer(q, r); });
    server.Get("/health", [this](const Request& q, Response& r) { HealthAnswer(q, r); });
    server.Get("/metrics", [this](const Request&, Response& r) {
      r.set_content(service->MetricsText() + ConnectionMetrics(), "text/plain; version=0.0.4");
    });
    PostJson("/run_code_batch", &Impl::HipBatch);
    PostJson("/run_code", &Impl::HipOne);
    PostJson("/evaluate", &Impl::TritonEvaluate);
  }

  // A POST route whose body this server reads itself, whatever its Content-Type:
  // cpp-httplib refuses a body over 8 KiB typed application/x-www-form-urlencoded
  // (what curl -d and Python's urllib send unless told otherwise) with 413.
  void PostJson(const char* path, void (Impl::*handler)(const Request&, Response&)) {
    server.Post(path, [this, handler](const Request& q, Response& r, const httplib::ContentReader& read) {
      Request req = q;
      // Without a length or chunks the body ends only when the client closes: a request
      // that never does would hold a thread for the read timeout.
      if (!q.has_header("Content-Length") &&
          q.get_header_value("Transfer-Encoding").find("chunked") == std::string::npos) {
        r.set_header("Connection", "close");
        return SendError(r, 411, ErrorKind::kLengthRequired,
                         "a POST body needs Content-Length or chunked encoding");
      }
      if (q.is_multipart_form_data()) {
        read([](const httplib::MultipartFormData&) { return true; }, [](const char*, size_t) { return true; });
        return SendError(r, 400, ErrorKind::kBadRequest, "the body must be JSON, not multipart/form-data");
      }
      // False: too large (413) or cut short (400); OnError answers with res.status.
      if (!read([&req](const char* data, size_t n) { return req.body.append(data, n), true; })) return;
      ConnectionGate::Handling();  // read: waiting for its verification has no deadline
      (this->*handler)(req, r);
    });
  }

  static std::string EndpointLabel(const Request& req) {
    std::string p = req.path;
    if (p.rfind("/v1/batches/", 0) == 0)
      p = p.size() > 7 && p.substr(p.size() - 7) == "/stream" ? "/v1/batches/{id}/stream" : "/v1/batches/{id}";
    static const char* known[] = {"/v1/verify", "/v1/batches", "/v1/batches/{id}", "/v1/batches/{id}/stream",
                                  "/v1/health", "/health", "/metrics", "/run_code_batch", "/run_code", "/evaluate"};
    for (const char* k : known)
      if (p == k) return req.method + " " + p;
    return "other";
  }

  // The gate's counters in Prometheus' text format (docs/serve.md, "Metrics").
  std::string ConnectionMetrics() const {
    return "# TYPE kvault_connections_open gauge\nkvault_connections_open " + std::to_string(gate.open()) +
           "\n# TYPE kvault_connections_refused_total counter\nkvault_connections_refused_total " +
           std::to_string(gate.refused()) +
           "\n# TYPE kvault_connections_cut_total counter\nkvault_connections_cut_total " +
           std::to_string(gate.cut_off()) +
           "\n# TYPE kvault_connections_evicted_total counter\nkvault_connections_evicted_total " +
           std::to_string(gate.evicted()) + "\n";
  }

  // The body's size as the client declared it (POST routes read the body into a copy
  // of the request, so the logger's has none).
  static uint64_t BodyBytes(const Request& req) {
    if (!req.body.empty()) return req.body.size();
    const std::string length = req.get_header_value("Content-Length");
    return length.empty() ? 0 : std::strtoull(length.c_str(), nullptr, 10);
  }

  // One line on stderr per request answered: when, who, what, the answer and its time.
  static void LogRequest(const Request& req, const Response& res) {
    const double unix_s =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    Json line{{"time", std::round(unix_s * 1000) / 1000},
              {"remote", req.remote_addr},
              {"method", req.method},
              {"path", EndpointLabel(req)},
              {"status", res.status},
              {"bytes_in", BodyBytes(req)}};
    if (request_start) {  // not for a request whose head could not be read
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - *request_start).count();
      line["ms"] = std::round(ms * 10) / 10;
      request_start.reset();
    }
    if (res.status >= 400) {
      auto answer = ParseJson(res.body);
      if (answer && answer->is_object() && answer->contains("error") && (*answer)["error"].is_object())
        line["error"] = (*answer)["error"].value("kind", std::string());
    }
    const std::string text = "kvault serve: request " + DumpJson(line) + "\n";
    std::fwrite(text.data(), 1, text.size(), stderr);
  }

  // When the request this thread serves was read (its head: the pre-routing handler).
  static inline thread_local std::optional<Clock::time_point> request_start;

  // Whether `req` carries this server's token (true when it has none).
  bool Authorized(const Request& req) const {
    if (settings.token.empty()) return true;
    const std::string auth = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    return auth.rfind(prefix, 0) == 0 && TimingSafeEqual(auth.substr(prefix.size()), settings.token);
  }

  httplib::Server::HandlerResponse Authorize(const Request& req, Response& res) {
    request_start = Clock::now();
    // A request without a body is read once its head is; POST routes say so after the body.
    if (req.method != "POST") ConnectionGate::Handling();
    else ConnectionGate::HeadRead();  // its body's own deadline starts
    // Health answers everyone (load balancers probe without credentials), but tells a
    // caller without the token only whether the server is up (HealthAnswer).
    if (req.path == "/health" || req.path == "/v1/health" || Authorized(req))
      return httplib::Server::HandlerResponse::Unhandled;
    res.set_header("WWW-Authenticate", "Bearer");
    SendError(res, 401, ErrorKind::kUnauthorized, "this server needs 'Authorization: Bearer <token>'");
    return httplib::Server::HandlerResponse::Handled;
  }

  void OnError(const Request& req, Response& res) {
    if (!res.body.empty()) return;  // a handler's own error answer
    switch (res.status) {
      case 404: {
        static const char* paths[] = {"/v1/verify", "/v1/batches", "/v1/health", "/health", "/metrics",
                                      "/run_code_batch", "/run_code", "/evaluate"};
        for (const char* p : paths)
          if (req.path == p)
            return SendError(res, 405, ErrorKind::kMethodNotAllowed, req.method + " is not served on " + req.path);
        if (req.path.rfind("/v1/batches/", 0) == 0)
          return SendError(res, 405, ErrorKind::kMethodNotAllowed, req.method + " is not served on " + req.path);
        return SendError(res, 404, ErrorKind::kNotFound, "no such endpoint: " + req.path + " (docs/serve.md)");
      }
      case 413:
        return SendError(res, 413, ErrorKind::kTooLarge,
                         "the body is over the limit of " + std::to_string(settings.max_body_bytes) + " bytes");
      default:
        return SendError(res, res.status, ErrorKind::kBadRequest, "the request could not be read (HTTP " +
                                                              std::to_string(res.status) + ")");
    }
  }

  // Submits `requests`; on a refusal the answer is sent and nullopt returned.
  std::optional<VerificationService::Submitted> Submit(const std::vector<ServeRequest>& requests, Response& res) {
    auto submitted = service->Submit(requests);
    if (auto* refused = std::get_if<VerificationService::SubmitError>(&submitted)) {
      SendError(res, RefusalCode(refused->why), RefusalKind(refused->why), refused->message, refused->retry_after_s);
      return std::nullopt;
    }
    return std::get<VerificationService::Submitted>(std::move(submitted));
  }

  // A finished job's outcome as request i sees it: one that joined a job an earlier
  // request made verified nothing itself (from_store).
  static ServeOutcome AsSeen(ServeOutcome o, bool shared) {
    if (shared) o.from_store = true;
    return o;
  }

  // Waits for every job (each until its request's deadline); the outcomes in order.
  std::vector<ServeOutcome> WaitAll(const std::vector<ServeRequest>& requests,
                                    const VerificationService::Submitted& submitted, Clock::time_point start) {
    const auto& jobs = submitted.jobs;
    std::vector<ServeOutcome> out;
    for (size_t i = 0; i < jobs.size(); ++i) {
      std::optional<Clock::time_point> until;
      if (requests[i].deadline_s)
        until = start + std::chrono::milliseconds(static_cast<int64_t>(*requests[i].deadline_s * 1000));
      auto o = service->Wait(*jobs[i], until);
      if (!o) {
        ServeOutcome late;
        late.error_kind = ErrorKind::kDeadline;
        late.message = "not finished within its deadline of " + std::to_string(*requests[i].deadline_s) +
                       " s; it is still verified and recorded, ask again later";
        o = late;
      }
      out.push_back(AsSeen(std::move(*o), submitted.shared[i]));
    }
    return out;
  }

  // One candidate answered alone (/v1/verify, /evaluate): submitted and waited for
  // until its deadline; nullopt when it was refused (the refusal is answered).
  struct Alone {
    ServeOutcome outcome;
    std::string id;
  };
  std::optional<Alone> RunAlone(const ServeRequest& request, Response& res, Clock::time_point start) {
    auto submitted = Submit({request}, res);
    if (!submitted) return std::nullopt;
    return Alone{WaitAll({request}, *submitted, start)[0], submitted->jobs[0]->id};
  }

  // Its HTTP code (OutcomeCode), with Retry-After when it met an infrastructure failure.
  static int AloneCode(const ServeOutcome& o, Response& res) {
    const int code = OutcomeCode(o);
    if (code == 503) res.set_header("Retry-After", kRetryAfterInfraS);
    return code;
  }

  std::shared_ptr<Batch> FindBatch(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = batches.find(id);
    return it == batches.end() ? nullptr : it->second;
  }

  std::string AddBatch(std::shared_ptr<Batch> batch) {
    std::lock_guard<std::mutex> lock(mu);
    // Forget batches long finished, and the oldest when there are too many.
    const auto now = Clock::now();
    for (auto it = batches.begin(); it != batches.end();) {
      bool old = now - it->second->created > kKeepBatch;
      if (old)
        for (const auto& j : it->second->jobs)
          if (service->Peek(*j).first != Job::State::kDone) old = false;
      it = old ? batches.erase(it) : std::next(it);
    }
    while (batches.size() >= kMaxBatches) {
      auto oldest = std::min_element(batches.begin(), batches.end(),
                                     [](const auto& a, const auto& b) { return a.second->created < b.second->created; });
      batches.erase(oldest);
    }
    std::string id = RandomId("b-");
    batches[id] = std::move(batch);
    return id;
  }

  // --- the native API ---------------------------------------------------------
  void VerifyOne(const Request& req, Response& res) {
    const auto start = Clock::now();
    auto body = ReadBody(req, res);
    if (!body) return;
    auto request = ParseVerifyRequest(*body, settings.defaults);
    if (!request) return SendError(res, 400, ErrorKind::kBadRequest, request.error());
    auto alone = RunAlone(*request, res, start);
    if (!alone) return;
    SendJson(res, AloneCode(alone->outcome, res), ResultJson(*request, alone->outcome, alone->id));
  }

  void SubmitBatch(const Request& req, Response& res) {
    auto body = ReadBody(req, res);
    if (!body) return;
    auto requests = ParseBatchRequest(*body, settings.defaults);
    if (!requests) return SendError(res, 400, ErrorKind::kBadRequest, requests.error());
    auto submitted = Submit(*requests, res);
    if (!submitted) return;
    auto batch = std::make_shared<Batch>();
    batch->requests = std::move(*requests);
    batch->jobs = std::move(submitted->jobs);
    batch->shared = std::move(submitted->shared);
    const size_t size = batch->jobs.size();
    const std::string id = AddBatch(std::move(batch));
    SendJson(res, 202, {{"batch_id", id}, {"size", size}});
  }

  Json BatchJson(const std::string& id, const Batch& b) {
    Json results = Json::array();
    size_t done = 0;
    for (size_t i = 0; i < b.jobs.size(); ++i) {
      auto [state, outcome] = service->Peek(*b.jobs[i]);
      if (state != Job::State::kDone) {
        results.push_back(nullptr);
        continue;
      }
      ++done;
      results.push_back(ResultJson(b.requests[i], AsSeen(outcome, b.shared[i]), b.jobs[i]->id));
    }
    return {{"batch_id", id}, {"size", b.jobs.size()}, {"done", done}, {"results", std::move(results)}};
  }

  bool AllDone(const Batch& b) {
    for (const auto& j : b.jobs)
      if (service->Peek(*j).first != Job::State::kDone) return false;
    return true;
  }

  void PollBatch(const Request& req, Response& res) {
    const std::string id = req.matches[1];
    auto batch = FindBatch(id);
    if (!batch) return SendError(res, 404, ErrorKind::kUnknownBatch, "no batch '" + id + "' (finished batches are kept an hour; a restarted server knows none: submit again, the store answers what was verified)");
    double wait_s = 0;
    if (req.has_param("wait_s")) {
      try {
        wait_s = std::stod(req.get_param_value("wait_s"));
      } catch (...) {
        return SendError(res, 400, ErrorKind::kBadRequest, "wait_s must be a number of seconds");
      }
      if (!(wait_s >= 0 && wait_s <= kMaxPollWaitS))
        return SendError(res, 400, ErrorKind::kBadRequest, "wait_s must be between 0 and 300");
    }
    const auto until = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(wait_s * 1000));
    uint64_t seen = service->Generation();
    while (!AllDone(*batch) && Clock::now() < until) seen = service->WaitForChange(seen, until);
    SendJson(res, 200, BatchJson(id, *batch));
  }

  void StreamBatch(const Request& req, Response& res) {
    const std::string id = req.matches[1];
    auto batch = FindBatch(id);
    if (!batch) return SendError(res, 404, ErrorKind::kUnknownBatch, "no batch '" + id + "'");
    auto sent = std::make_shared<std::vector<bool>>(batch->jobs.size(), false);
    res.set_chunked_content_provider("application/x-ndjson", [this, batch, sent](size_t, httplib::DataSink& sink) {
      uint64_t seen = service->Generation();
      size_t left = std::count(sent->begin(), sent->end(), false);
      while (left > 0) {
        for (size_t i = 0; i < batch->jobs.size(); ++i) {
          if ((*sent)[i]) continue;
          auto [state, outcome] = service->Peek(*batch->jobs[i]);
          if (state != Job::State::kDone) continue;
          const std::string line =
              DumpJson({{"index", i},
                        {"result", ResultJson(batch->requests[i], AsSeen(outcome, batch->shared[i]),
                                              batch->jobs[i]->id)}}) +
              "\n";
          if (!sink.write(line.data(), line.size())) return false;
          (*sent)[i] = true;
          --left;
        }
        if (left == 0) break;
        if (sink.is_writable && !sink.is_writable()) return false;
        seen = service->WaitForChange(seen, Clock::now() + kStreamTick);
      }
      const std::string end = "{\"done\":true}\n";
      sink.write(end.data(), end.size());
      sink.done();
      return true;
    });
  }

  void CancelBatch(const Request& req, Response& res) {
    const std::string id = req.matches[1];
    auto batch = FindBatch(id);
    if (!batch) return SendError(res, 404, ErrorKind::kUnknownBatch, "no batch '" + id + "'");
    SendJson(res, 200, {{"batch_id", id}, {"cancelled", service->Cancel(batch->jobs)}});
  }

  void HealthAnswer(const Request& req, Response& res) {
    Json h = service->Health();
    h["version"] = KVAULT_VERSION;
    h["protocols"] = {"kvault/v1", "hip-sandbox", "triton-evaluate/1"};
    const bool ok = h.value("status", "") == "ok";
    if (!ok) res.set_header("Retry-After", "10");
    // Without the token: up or not, nothing of the machine (backend, arch, lanes, queue).
    if (!Authorized(req)) h = Json{{"status", h["status"]}};
    SendJson(res, ok ? 200 : 503, h);
  }

  // --- AMD's protocols --------------------------------------------------------
  // Answers a whole list at once: 503 when any candidate hit an infrastructure
  // failure (the client retries; the store answers the others).
  void HipAnswer(const std::vector<ServeRequest>& requests, const std::vector<std::string>& names,
                 Response& res, Clock::time_point start, bool single) {
    auto submitted = Submit(requests, res);
    if (!submitted) return;
    auto outcomes = WaitAll(requests, *submitted, start);
    Json responses = Json::array();
    int code = 200;
    for (size_t i = 0; i < outcomes.size(); ++i) {
      responses.push_back(HipResponseJson(requests[i], outcomes[i], names[i]));
      if (outcomes[i].error_kind && Retryable(*outcomes[i].error_kind)) code = 503;
    }
    if (code == 503) res.set_header("Retry-After", kRetryAfterInfraS);
    const double total = std::chrono::duration<double>(Clock::now() - start).count();
    if (single) {
      Json one = responses[0];
      one["total_time"] = total;
      return SendJson(res, code, one);
    }
    SendJson(res, code, {{"responses", responses}, {"total_time", total}, {"batch_size", responses.size()}});
  }

  void HipBatch(const Request& req, Response& res) {
    const auto start = Clock::now();
    auto body = ReadBody(req, res);
    if (!body) return;
    auto requests = ParseHipBatch(*body, settings.defaults);
    if (!requests) return SendError(res, 400, ErrorKind::kBadRequest, requests.error());
    std::vector<std::string> names;
    for (const Json& item : (*body)["requests"]) names.push_back(item.value("kernel_name", std::string()));
    HipAnswer(*requests, names, res, start, false);
  }

  void HipOne(const Request& req, Response& res) {
    const auto start = Clock::now();
    auto body = ReadBody(req, res);
    if (!body) return;
    auto request = ParseHipRequest(*body, settings.defaults);
    if (!request) return SendError(res, 400, ErrorKind::kBadRequest, request.error());
    HipAnswer({*request}, {body->value("kernel_name", std::string())}, res, start, true);
  }

  void TritonEvaluate(const Request& req, Response& res) {
    const auto start = Clock::now();
    auto body = ReadBody(req, res);
    if (!body) return;
    auto request = ParseTritonRequest(*body, settings.triton ? &*settings.triton : nullptr, settings.defaults);
    if (!request) return SendError(res, 400, ErrorKind::kBadRequest, request.error());
    auto alone = RunAlone(*request, res, start);
    if (!alone) return;
    const ServeOutcome& o = alone->outcome;
    Json answer = TritonResponseJson(o);
    if (o.error_kind)
      answer["error"] = {{"kind", std::string(ToString(*o.error_kind))}, {"message", o.message}};
    SendJson(res, AloneCode(o, res), answer);
  }
};

HttpServer::HttpServer(HttpSettings settings) : impl_(std::make_unique<Impl>(std::move(settings))) {
  impl_->Route();
}

HttpServer::~HttpServer() = default;

Result<int> HttpServer::Bind() {
  const std::string& host = impl_->settings.host;
  int port = impl_->settings.port;
  if (port == 0) {
    port = impl_->server.bind_to_any_port(host);
    if (port <= 0) return Error{"cannot bind " + host + " to any port"};
  } else if (!impl_->server.bind_to_port(host, port)) {
    return Error{"cannot bind " + host + ":" + std::to_string(port) + " (in use, or not an address of this host)"};
  }
  // Every connection holds a socket and the gate's duplicate of it: room for the most
  // the gate runs at once (the bound and a quarter more, closing).
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0) {
    const rlim_t want = static_cast<rlim_t>(impl_->settings.max_connections) * 3 + 512;
    if (files.rlim_cur < want) {
      files.rlim_cur = std::min(want, files.rlim_max);
      (void)::setrlimit(RLIMIT_NOFILE, &files);
    }
  }
  // cpp-httplib listens with a backlog of 5: a burst of connections (an RL step's
  // samples at once) overflows it and the kernel resets some of them. Listening again
  // on the bound socket raises it to the system's limit.
  if (impl_->listen_fd >= 0) ::listen(impl_->listen_fd, SOMAXCONN);
  return port;
}

void HttpServer::Listen(VerificationService& service) {
  impl_->service = &service;
  impl_->server.listen_after_bind();
}

void HttpServer::Stop() {
  impl_->server.stop();
  impl_->gate.CloseReading();  // idle and half-read connections would hold Listen up to their deadline
}

}  // namespace kvault::serve
