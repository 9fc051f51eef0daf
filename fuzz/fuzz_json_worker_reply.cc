// Fuzzes what the engine does with one response line from an untrusted worker:
// bounded JSON parsing (util/json_parse.h, with ProcessWorker's depth limit and
// checks), then the outcome mapping of engine/worker_outcome.h on the accepted reply
// and the verdict on its `output_aliases` (engine/output_aliasing.h; the same reply
// standing in for the reference's).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/output_aliasing.h"
#include "engine/worker_outcome.h"
#include "util/json_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  (void)kvault::JsonNestingDepth(line);
  auto parsed = kvault::ParseJson(line, /*max_depth=*/64);  // ProcessWorker's kMaxResponseDepth
  if (!parsed) return 0;
  // ProcessWorker::TakeResponse accepts only an object whose "id" is the request's.
  if (!parsed->is_object()) return 0;
  auto id = parsed->find("id");
  if (id == parsed->end() || !id->is_number_integer()) return 0;
  kvault::WorkerReply reply;
  reply.response = std::move(*parsed);
  (void)kvault::AliasingFailure(reply.response, "run case small seed 1",
                                [&] { return kvault::ReferenceReply(reply.response); });
  if (kvault::ReplyOk(reply)) return 0;
  (void)kvault::JudgeTrustedFailure(reply, "describe");
  kvault::Verification v = kvault::CandidateFailure(reply, "run case small seed 1",
                                                    std::chrono::seconds(30), "worker log");
  (void)v;
  return 0;
}
