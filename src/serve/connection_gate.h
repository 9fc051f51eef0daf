#pragma once
// ConnectionGate: the connections `kvault serve` reads, bounded (docs/serve.md,
// "Slow and many connections"). cpp-httplib serves each connection on a thread of
// its task queue and bounds only each single read (a client sending a byte every few
// seconds holds a thread for good); this queue
//   - runs every connection on its own thread, up to `max_connections` at once, so a
//     few hundred slow clients cannot keep /v1/health waiting behind them;
//   - when every slot is taken, makes room for a new connection by closing the
//     reading connection furthest behind (a head not complete `evict_grace` after
//     it began, or a body slower than `min_body_rate`): however many slow clients
//     there are, an honest request (its head sent at once) is served at once. Only
//     when none is behind is the new one answered 503 at once (nothing read) and
//     closed. A connection whose request is read (waiting for its verification) is
//     never closed to make room;
//   - gives the reading of each request deadlines: its head `head_deadline` from the
//     start (accept, or the previous answer), its body `head_deadline` plus a second
//     per `min_body_rate` bytes received, head and body `read_deadline` in all; a
//     connection still reading past one is shut down, whatever it trickles. The wait
//     for a verification is not reading: handlers call Handling() once the body is in;
//   - bounds each request's head (line and headers, `max_head_bytes`): cpp-httplib
//     bounds a line but not their number, and keeps every header in memory. Counted
//     in this file's recv() (the C library's, interposed), and a connection past it
//     is closed.
//
//   ConnectionGate gate({.max_connections = 1024, .read_deadline = 60s});
//   server.new_task_queue = [&] { return gate.NewQueue(); };
//   // in a handler, once the request is read:  ConnectionGate::Handling();
//   // after each answer (keep-alive: the next request is read):  ConnectionGate::Reading();
//
// How it knows each connection's socket: cpp-httplib accepts on its listening thread
// and queues the connection at once; this file's accept()/accept4() (the C library's,
// interposed) note the socket the calling thread accepted last, and the queue takes it.
// Thread-safe.
#include <chrono>
#include <cstddef>
#include <httplib.h>
#include <memory>

namespace kvault::serve {

struct GateSettings {
  size_t max_connections = 1024;                  // connections served at once
  std::chrono::milliseconds read_deadline{60000};  // reading one request, head and body
  int retry_after_s = 5;                          // of the 503 beyond max_connections
  size_t max_head_bytes = 64 << 10;               // a request's line and headers
  std::chrono::milliseconds head_deadline{10000};  // from the start to a complete head
  size_t min_body_rate = 64 << 10;                // bytes/s a body keeps up, after head_deadline
  std::chrono::milliseconds evict_grace{100};     // a head younger than this is never closed for room
};

class ConnectionGate {
 public:
  explicit ConnectionGate(GateSettings settings);
  ~ConnectionGate();  // REQUIRES: every queue it made was shut down
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  // A task queue for httplib::Server::new_task_queue (owned by the server).
  httplib::TaskQueue* NewQueue();

  // On a connection's thread: the request is read (its deadline no longer applies),
  // or the next one is about to be read (its deadline starts now). No-ops elsewhere.
  static void Handling();
  static void Reading();
  // On a connection's thread: the request's head is read (its body, if any, is next).
  // The gate sees a head's end in the bytes it reads; this tells it of a head already
  // buffered (pipelined after the previous request).
  static void HeadRead();

  // Shuts down every connection still reading a request (or idle between two): for a
  // server that stops, which answers only what it has read.
  void CloseReading();

  // Connections open now, and those refused or cut off so far (metrics, tests).
  size_t open() const;
  size_t refused() const;
  size_t cut_off() const;
  size_t evicted() const;  // of cut_off(): closed to make room for a new connection

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace kvault::serve
