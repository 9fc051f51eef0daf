#pragma once
// Test helper: scripts a FakeWorker to answer time_start / time_warmup / time_batch / time_finish
// (docs/worker-protocol.md) like a worker whose side always takes `ms` per call
// (reference_ms on the side "reference", candidate_ms on "candidate"), writing
// `output` to the `out` of time_finish. Tests only.
#include <memory>
#include <string>
#include <vector>

#include "check/testing/tensor_file_writer.h"
#include "worker/fake_worker.h"

namespace kvault::testing {

struct FakeTiming {
  double reference_ms = 2.0;
  double candidate_ms = 1.0;
  std::vector<float> reference_output{0, 1, 2};
  std::vector<float> candidate_output{0, 1, 2};
  double call_ms = 1.0;              // reported by time_warmup
  double device_call_ms = -1;        // reported by time_warmup when >= 0
  bool reference_kept = false;       // the reference's time_start answers kept
  bool graph_fails = false;          // time_batch with cuda_graph answers graph_failed
  bool candidate_modifies_inputs = false;
  bool candidate_batch_raises = false;  // the candidate's time_batch answers runtime_error
  std::string candidate_digest = "d";
  bool reference_irreproducible = false;  // the reference's digest changes at every time_start
  int reference_starts = 0;
  // With `handoff` in time_finish, the reference offers and the candidate delivers;
  // handoff_compare answers served (or not) and a match (docs/device-compare.md).
  bool handoff_served = true;
  int handoff_compares = 0, handoff_releases = 0;
  std::vector<std::string> log;      // "<side>:<op>[:<method>]" in call order
  std::vector<Json> starts, finishes;  // every time_start and time_finish request
};

inline void WriteFloats(const std::string& path, const std::vector<float>& values) {
  TensorFileWriter w;
  w.SetTree(w.Add<float>({static_cast<int64_t>(values.size())}, values));
  (void)w.WriteTo(path);
}

inline void ScriptTiming(FakeWorker& w, std::shared_ptr<FakeTiming> t) {
  auto side = std::make_shared<std::string>();
  w.Handle("time_start", [t, side](const Json& r) {
    *side = r.value("side", std::string());
    t->log.push_back(*side + ":time_start");
    t->starts.push_back(r);
    const bool ref = *side == "reference";
    if (ref) ++t->reference_starts;
    const std::string ref_digest = t->reference_irreproducible ? "d" + std::to_string(t->reference_starts) : "d";
    return FakeWorker::Ok(Json{{"timer", "monotonic_clock"},
                               {"input_digest", ref ? ref_digest : t->candidate_digest},
                               {"flush_bytes", 64}, {"kept", ref && t->reference_kept},
                               {"output_layout", ref ? Json{{"tree", "x"}} : Json(nullptr)}});
  });
  w.Handle("time_warmup", [t, side](const Json&) {
    t->log.push_back(*side + ":time_warmup");
    Json reply{{"call_ms", t->call_ms}, {"warmup_calls", 3},
               {"sensors", *side == "reference" ? Json{{"source", "nvml"}, {"sm_mhz", 1700}} : Json(nullptr)}};
    if (t->device_call_ms >= 0) reply["device_call_ms"] = t->device_call_ms;
    return FakeWorker::Ok(reply);
  });
  w.Handle("time_batch", [t, side](const Json& r) {
    const std::string method = r.value("method", std::string());
    t->log.push_back(*side + ":time_batch:" + method);
    if (*side == "candidate" && t->candidate_batch_raises) {
      WorkerReply failed;
      failed.response = Json{{"ok", false}, {"kind", "runtime_error"}, {"message", "boom"}};
      return failed;
    }
    if (method == "cuda_graph" && t->graph_fails) return FakeWorker::Ok(Json{{"graph_failed", "no"}});
    const double ms = *side == "reference" ? t->reference_ms : t->candidate_ms;
    const int cold = r.value("cold", 0), warm = r.value("warm", 0);
    return FakeWorker::Ok(Json{{"cold_ms", std::vector<double>(cold, ms)},
                               {"warm_ms", std::vector<double>(warm, ms / 2)},
                               {"wall_ms", std::vector<double>(cold + warm, ms)}});
  });
  w.Handle("time_finish", [t, side](const Json& r) {
    t->log.push_back(*side + ":time_finish");
    t->finishes.push_back(r);
    const bool ref = *side == "reference";
    Json reply{{"inputs_modified", !ref && t->candidate_modifies_inputs},
               {"sensors", ref ? Json{{"source", "nvml"}, {"sm_mhz", 1980}} : Json(nullptr)}};
    if (r.contains("handoff")) {
      reply["handoff"] = ref ? Json{{"output_layout", {{"tree", {{"kind", "tensor"}, {"index", 0}}},
                                                       {"tensors", {{{"dtype", "float32"}, {"shape", {3}}}}}}}}
                             : Json("delivered");
    } else if (r.contains("out")) {
      WriteFloats(r["out"], ref ? t->reference_output : t->candidate_output);
    }
    return FakeWorker::Ok(reply);
  });
  w.Handle("handoff_compare", [t](const Json&) {
    ++t->handoff_compares;
    Json calls = Json::array();
    if (t->handoff_served)
      calls.push_back(Json{{"match", true}, {"compared", 3}, {"mismatched", 0}, {"max_abs", 0.0}, {"max_rel", 0.0}});
    return FakeWorker::Ok(Json{{"served", t->handoff_served}, {"calls", calls}});
  });
  w.Handle("handoff_release", [t](const Json&) {
    ++t->handoff_releases;
    return FakeWorker::Ok();
  });
}

}  // namespace kvault::testing
