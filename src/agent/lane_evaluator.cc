#include "agent/lane_evaluator.h"

#include <filesystem>

#include "engine/batch.h"
#include "engine/fingerprint.h"

namespace kvault::agent {

LaneEvaluator::LaneEvaluator(EngineOptions options, std::string run, Store& store, int lanes)
    : options_(std::move(options)), run_(std::move(run)), store_(store) {
  for (int i = 0; i < std::max(1, lanes); ++i) {
    lanes_.push_back(std::make_unique<Lane>());
    free_.push_back(lanes_.back().get());
  }
}

LaneEvaluator::~LaneEvaluator() = default;

LaneEvaluator::Lane* LaneEvaluator::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !free_.empty(); });
  Lane* lane = free_.back();
  free_.pop_back();
  return lane;
}

void LaneEvaluator::Release(Lane* lane) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(lane);
  }
  cv_.notify_one();
}

Result<AttemptRecord> LaneEvaluator::Evaluate(const TaskFile& task, const std::string& path) {
  Lane* lane = Acquire();
  struct Releaser {
    LaneEvaluator* self;
    Lane* lane;
    ~Releaser() { self->Release(lane); }
  } releaser{this, lane};
  if (!lane->verifier) lane->verifier = std::make_unique<Verifier>(options_);
  if (lane->environment.is_null()) {
    auto hello = lane->verifier->Hello();
    lane->environment = EnvironmentFingerprint(hello ? *hello : Json(nullptr));
  }
  auto candidate = LoadCandidate(path);
  // Each generated candidate is a sample of its own, named by its label (iter1_0):
  // identical answers are distinct attempts.
  const std::string sample = std::filesystem::path(path).stem().string();
  std::string arch = options_.arch;
  if (arch.empty() && lane->environment.is_object() && lane->environment.contains("device"))
    arch = lane->environment["device"].value("arch", std::string());
  if (candidate) {
    auto found = store_.FindSample(run_, task.name, sample, candidate->hash,
                                   std::string(ToString(options_.backend)), arch);
    if (!found) return Error{found.error()};
    if (found->has_value()) {
      auto status = OutcomeStatusFromString((*found)->status);
      if (status && !IsInfrastructure(*status)) return std::move(**found);
    }
  }
  Verification v = VerifyLoaded(*lane->verifier, task, candidate);
  AttemptRecord rec = MakeRecord(run_, task, candidate ? &*candidate : nullptr, path, options_, v,
                                 lane->environment);
  rec.sample = sample;
  if (Status st = store_.Put(rec); !st) return Error{"cannot write to the store: " + st.error()};
  return rec;
}

}  // namespace kvault::agent
