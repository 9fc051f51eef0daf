#include "engine/verification.h"

namespace kvault {
namespace {
Json Opt(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }
}  // namespace

Json Verification::ToJson() const {
  return Json{{"status", std::string(ToString(status))},
              {"compiled", compiled},
              {"correct", correct},
              {"speedup", Opt(speedup)},
              {"reference_ms", Opt(reference_ms)},
              {"candidate_ms", Opt(candidate_ms)},
              {"reward", Opt(reward)},
              {"message", message},
              {"diagnostics", diagnostics},
              {"policy", policy.empty() ? Json(nullptr) : Json(policy)},
              {"cases", CasesJson(records, phases)},
              {"build", build},
              {"held_out", held_out},
              {"seconds", seconds},
              {"phases", phases ? phases->ToJson() : Json::object()}};
}

}  // namespace kvault
