#include "worker/fake_worker.h"

namespace kvault {

WorkerReply FakeWorker::Ok(Json fields) {
  WorkerReply r;
  r.response = Json{{"ok", true}};
  if (fields.is_object()) r.response.update(fields);
  return r;
}

void FakeWorker::Reply(const std::string& op, Json response) {
  WorkerReply r;
  r.response = std::move(response);
  Enqueue(op, std::move(r));
}

void FakeWorker::Fail(const std::string& op, WorkerFailure failure, std::string detail,
                      int exit_code, int term_signal) {
  WorkerReply r;
  r.failure = failure;
  r.detail = std::move(detail);
  r.exit_code = exit_code;
  r.term_signal = term_signal;
  Enqueue(op, std::move(r));
}

void FakeWorker::Enqueue(const std::string& op, WorkerReply reply) {
  queued_[op].push_back(std::move(reply));
}

void FakeWorker::Handle(const std::string& op, Handler handler) {
  handlers_[op] = std::move(handler);
}

std::vector<std::string> FakeWorker::ops() const {
  std::vector<std::string> out;
  for (const auto& r : received_) out.push_back(r.request.value("op", std::string()));
  return out;
}

WorkerReply FakeWorker::Call(Json request, std::chrono::milliseconds timeout) {
  request["id"] = next_id_++;
  received_.push_back({request, timeout});
  if (!alive_) {
    WorkerReply dead;
    dead.failure = WorkerFailure::kDied;
    dead.detail = "worker is not running";
    return dead;
  }
  const std::string op = request.value("op", std::string());
  WorkerReply reply;
  auto queue = queued_.find(op);
  if (queue != queued_.end() && !queue->second.empty()) {
    reply = std::move(queue->second.front());
    queue->second.pop_front();
  } else if (auto h = handlers_.find(op); h != handlers_.end()) {
    reply = h->second(request);
  } else {
    reply.response = Json{{"ok", false},
                          {"kind", "internal"},
                          {"message", "fake worker: nothing scripted for op '" + op + "'"}};
  }
  if (reply.failure == WorkerFailure::kNone) {
    if (reply.response.is_object()) reply.response["id"] = request["id"];
  } else {
    alive_ = false;
  }
  return reply;
}

std::string FakeWorker::TakeLog() { return std::exchange(log_, {}); }

void FakeWorker::Kill() {
  ++kill_count_;
  alive_ = false;
}

}  // namespace kvault
