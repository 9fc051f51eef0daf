#include "engine/inline_prebuild.h"

#include <algorithm>
#include <chrono>

#include "candidate/inline_unit.h"
#include "engine/candidate_build.h"
#include "engine/inline_record.h"
#include "util/sha256.h"

namespace kvault {
namespace {

// A record here is only a head start: a file that takes longer than this to run to
// its calls is left to its lane, which notes it under the load's own limit.
constexpr std::chrono::milliseconds kRecordLimit{10'000};

// What hides a machine's GPUs from a process that must not touch them.
constexpr const char* kDeviceMasks[] = {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"};

}  // namespace

InlinePrebuild::InlinePrebuild(const EngineOptions& options, Json hello, CompilePool& pool, WorkerFactory factory)
    : options_(options), hello_(std::move(hello)), pool_(pool), factory_(std::move(factory)) {
  if (auto dir = TempDir::Create(options_.cache_dir + "/tmp", "inline-ahead"); dir) sources_ = std::move(*dir);
  if (!sources_) return;  // nothing can be written: the lanes build, as before
  const int threads = std::max(1, std::min(pool.threads(), kInlinePrebuildThreads));
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

InlinePrebuild::~InlinePrebuild() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  queued_.notify_all();
  for (auto& t : threads_) t.join();
}

void InlinePrebuild::Submit(const Candidate& candidate, const std::string& task_path) {
  if (!CallsLoadInline(candidate) || threads_.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    queue_.push_back(Item{candidate.path, task_path, candidate.hash});
  }
  queued_.notify_one();
}

size_t InlinePrebuild::noted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return noted_;
}

size_t InlinePrebuild::queued_builds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_builds_;
}

void InlinePrebuild::Work() {
  DeviceSession session(options_, "cpu", factory_);
  for (const char* mask : kDeviceMasks) session.SetWorkerEnv(mask, "");
  for (;;) {
    Item item;
    std::string folder;
    {
      std::unique_lock<std::mutex> lock(mu_);
      queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      item = std::move(queue_.front());
      queue_.pop_front();
      folder = sources_->Join("f" + std::to_string(next_file_++));
    }
    Note(session, item, folder);
    std::lock_guard<std::mutex> lock(mu_);
    ++noted_;
  }
}

void InlinePrebuild::Note(DeviceSession& session, const Item& item, const std::string& folder) {
  // Calls a lane noted of the same file before are built without running it again.
  std::optional<NotedInlineCalls> kept;
  if (auto task_hash = Sha256FileHex(item.task_path); task_hash && !item.candidate_hash.empty())
    kept = LookupInlineCalls(options_.cache_dir, InlineCallsKey(item.candidate_hash, *task_hash, hello_));
  InlineRecord record;
  if (kept) {
    record.calls = kept->calls;
  } else {
    auto w = session.Get(WorkerRole::kCandidate);
    if (!w) return;  // no worker here: the lane's own will say what is wrong
    record = RecordInlineCalls(**w, item.candidate_path, item.task_path, kRecordLimit);
    (*w)->TakeLog();
    session.Discard(WorkerRole::kCandidate);  // it ran the candidate's code
    session.Prestart();
  }
  if (!record.calls.is_array() || record.calls.empty() || !EnsureDir(folder)) return;
  for (size_t i = 0; i < record.calls.size(); ++i) {
    auto unit = BuildableInlineUnit(record.calls[i], options_.backend);
    if (!unit) continue;
    Candidate source = InlineUnitSource(*unit, folder, i);
    if (!WriteFileAtomic(source.path, source.source)) continue;
    auto request = CandidateBuildRequest(source, options_, hello_, unit->extra_flags, unit->extra_link_flags);
    if (!request) return;
    request->lite_only = true;  // a source the lite way cannot build goes to its lane, as before
    pool_.Submit(*request, options_.timeouts.compile, CompilePool::Claim::kNone);
    std::lock_guard<std::mutex> lock(mu_);
    ++queued_builds_;
  }
}

}  // namespace kvault
