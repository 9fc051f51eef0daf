#pragma once
// The HTTP face of the reward service (docs/serve.md): the native API (/v1/...),
// AMD's HIP-sandbox and Triton-server protocols, health and Prometheus metrics, over
// cpp-httplib. Every route parses with serve/request.h and hands work to the
// VerificationService; this file only maps results and refusals to HTTP.
//
//   HttpServer http(settings);
//   auto port = http.Bind();        // before the service starts its lanes: a taken port fails at once
//   http.Listen(service);           // until Stop() (from a signal thread)
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "serve/request.h"
#include "serve/service.h"

namespace kvault::serve {

struct HttpSettings {
  std::string host = "127.0.0.1";
  int port = 8470;            // 0: any free port
  std::string token;          // "" = none (allowed on loopback only: the CLI checks)
  size_t max_body_bytes = 32u << 20;
  // Connections served at once (a waiting verify holds one; each has a thread); one
  // beyond closes the slowest still reading its request, or gets 503 at once if none
  // is behind. Reading a request (head and body) has `read_deadline` in all, its head
  // 10 s; a connection still reading past one is closed (serve/connection_gate.h).
  size_t max_connections = 1024;
  std::chrono::milliseconds read_deadline{60000};
  RequestDefaults defaults;
  std::optional<TritonSuite> triton;
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopback(const std::string& host);

class HttpServer {
 public:
  explicit HttpServer(HttpSettings settings);
  ~HttpServer();
  // Binds the socket; returns the port.
  Result<int> Bind();
  // Serves `service` until Stop(). REQUIRES: Bind() succeeded.
  void Listen(VerificationService& service);
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvault::serve
