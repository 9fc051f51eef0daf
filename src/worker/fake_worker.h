#pragma once
// FakeWorker: a scripted WorkerConnection for tests of the engine and other
// components; it starts no process.
//
//   auto fake = std::make_unique<FakeWorker>();
//   fake->Reply("hello", Json{{"ok", true}, {"protocol", 1}});
//   fake->Reply("run", Json{{"ok", false}, {"kind", "runtime_error"}, {"message", "boom"}});
//   fake->Fail("run", WorkerFailure::kDied, "worker killed by signal 11 (SIGSEGV)", -1, 11);
//   fake->Handle("reference", [](const Json& req) {   // e.g. write req["out"] first
//     return FakeWorker::Ok(Json{{"input_digest", "d"}});
//   });
//
// For each request, the first queued reply for its op is used (and consumed); else
// the op's handler; else a failed response {"ok": false, "kind": "internal",
// "message": "fake worker: nothing scripted for op 'X'"}. A kNone reply gets the
// request's id. A failure reply (kTimeout, kDied, kProtocol) leaves the fake dead,
// like a real worker: alive() turns false and later calls fail with kDied.
//
// Thread safety: none (like any WorkerConnection).
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "worker/connection.h"

namespace kvault {

class FakeWorker : public WorkerConnection {
 public:
  using Handler = std::function<WorkerReply(const Json& request)>;

  // A kNone reply whose response is {"ok": true} merged with `fields`.
  static WorkerReply Ok(Json fields = Json::object());

  // Queues a successful-transport reply (the response may say "ok": false).
  void Reply(const std::string& op, Json response);
  // Queues a transport failure, e.g. (kDied, "worker killed by signal 11 (SIGSEGV)", -1, 11).
  void Fail(const std::string& op, WorkerFailure failure, std::string detail,
            int exit_code = -1, int term_signal = 0);
  // Queues any reply.
  void Enqueue(const std::string& op, WorkerReply reply);
  // Answers every request of `op` that finds no queued reply.
  void Handle(const std::string& op, Handler handler);
  // Text that the next TakeLog() returns (appended to what is there).
  void AppendLog(const std::string& text) { log_ += text; }

  struct Received {
    Json request;  // with the "id" the fake assigned
    std::chrono::milliseconds timeout;
  };
  // Every request received, in order (including those answered while dead).
  const std::vector<Received>& received() const { return received_; }
  // The ops of received(), in order: e.g. {"hello", "load", "run"}.
  std::vector<std::string> ops() const;
  int kill_count() const { return kill_count_; }

  WorkerReply Call(Json request, std::chrono::milliseconds timeout) override;
  bool alive() const override { return alive_; }
  std::string TakeLog() override;
  void Kill() override;

 private:
  std::map<std::string, std::deque<WorkerReply>> queued_;
  std::map<std::string, Handler> handlers_;
  std::vector<Received> received_;
  std::string log_;
  int64_t next_id_ = 1;
  bool alive_ = true;
  int kill_count_ = 0;
};

}  // namespace kvault
