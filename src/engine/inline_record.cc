#include "engine/inline_record.h"

#include "cache/cache.h"
#include "engine/candidate_build.h"
#include "engine/fingerprint.h"
#include "engine/worker_outcome.h"
#include "worker/protocol.h"

namespace kvault {

bool CallsLoadInline(const Candidate& c) {
  return c.format == CandidateFormat::kKernelBench && c.source.find("load_inline") != std::string::npos;
}

InlineRecord RecordInlineCalls(WorkerConnection& w, const std::string& candidate_path,
                               const std::string& task_path, std::chrono::milliseconds timeout) {
  using protocol::field::kCalls, protocol::field::kStopped;
  InlineRecord record;
  record.file = w.Call(RecordInlineRequest{candidate_path}.ToJson(), timeout);
  if (!ReplyOk(record.file)) return record;
  record.calls = record.file.response.value(kCalls, Json());
  if (record.file.response.contains(kStopped) || !record.calls.is_array() || !record.calls.empty())
    return record;
  record.constructed = w.Call(RecordInlineRequest{candidate_path, task_path}.ToJson(), timeout);
  if (ReplyOk(*record.constructed) && record.constructed->response.value(kCalls, Json()).is_array())
    record.calls = record.constructed->response[kCalls];
  return record;
}

namespace {
constexpr char kInlineCallsKind[] = "inline_calls";
}  // namespace

std::string InlineCallsKey(const std::string& candidate_hash, const std::string& task_hash, const Json& hello) {
  KeyHasher h;
  h.Add("inline_calls", "1");
  h.Add("protocol", std::to_string(protocol::kVersion));
  h.Add("candidate", candidate_hash);
  h.Add("task", task_hash);
  AddWorkerSoftware(h, hello);
  return h.Hex();
}

std::optional<NotedInlineCalls> LookupInlineCalls(const std::string& cache_dir, const std::string& key) {
  auto limits = CacheLimits::FromEnv();
  if (!limits) return std::nullopt;
  auto entry = Cache(cache_dir, kInlineCallsKind, *limits).Lookup(key);
  if (!entry) return std::nullopt;
  const Json& meta = entry->manifest.meta;
  if (!meta.is_object() || !meta.contains("calls") || !meta["calls"].is_array()) return std::nullopt;
  return NotedInlineCalls{meta["calls"], meta.value("construct_failed", std::string())};
}

void KeepInlineCalls(const std::string& cache_dir, const std::string& key, const NotedInlineCalls& noted) {
  auto limits = CacheLimits::FromEnv();
  if (!limits) return;
  Cache cache(cache_dir, kInlineCallsKind, *limits);
  auto staged = cache.Stage();
  if (!staged) return;
  (void)cache.Commit(key, std::move(*staged), Json{{"calls", noted.calls}, {"construct_failed", noted.construct_failed}});
}

Result<InlineUnit> BuildableInlineUnit(const Json& call, Backend backend) {
  auto unit = InlineUnitFor(call);
  if (!unit) return unit;
  if (std::string why = BackendMismatch(unit->language, backend); !why.empty()) return Error{why};
  return unit;
}

Candidate InlineUnitSource(const InlineUnit& unit, const std::string& folder, size_t index) {
  const bool cuda = unit.language == "cuda";
  return Candidate{folder + "/inline_" + std::to_string(index) + (cuda ? ".cu" : ".cpp"), unit.source,
                   CandidateFormat::kExtension, unit.language, ""};
}

}  // namespace kvault
