#pragma once
// Test helper: scripts a FakeWorker to answer time_start / time_warmup / time_graph /
// time_flush / time_sample / time_burst / time_finish (docs/worker-protocol.md) like a worker whose
// side always takes `ms` per call (reference_ms on the side "reference", candidate_ms on
// "candidate"; warm samples half of it), writing `output` to the `out` of time_sample
// and time_finish, or keeping it (`keep_as`) until time_output hands it over. Tests only.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "check/testing/tensor_file_writer.h"
#include "util/sha256.h"
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
  bool graph_fails = false;          // time_graph answers graph_failed
  int graph_calls = 50;              // the reference's own graph size (time_graph without calls)
  int candidate_graph_calls = -1;    // what the candidate's time_graph answers; < 0: as asked
  // What the candidate's timed samples write; empty: the reference's output.
  std::vector<float> candidate_sample_output;
  // A candidate that makes its sample outputs right after their replies: at each later
  // request of its timing, every output file it wrote before is rewritten with the
  // reference's output (as a thread of its process could, beside the engine).
  bool candidate_fixes_outputs_later = false;
  std::vector<std::string> candidate_written;
  // What the candidate's time_sample says the SHA-256 of its output file is; empty:
  // the truth.
  std::string candidate_sample_digest;
  // Each sample request of a side sleeps this long (the engine's clock sees it),
  // whatever the side reports.
  double reference_sleep_ms = 0, candidate_sleep_ms = 0;
  // Extra sleep of the reference's sample requests, in turn (a busy host's noise).
  std::vector<double> reference_sample_jitter_ms;
  // What one run of a side's burst takes on the engine's clock; < 0: the side's warm
  // sleep (a sample's time). Less than that: its samples carry a cost of their own.
  double reference_burst_ms = -1, candidate_burst_ms = -1;
  int bursts = 0;                   // time_burst requests seen
  int samples = 0, flushes = 0;     // requests seen
  bool candidate_modifies_inputs = false;          // the candidate's time_finish says so
  bool candidate_modifies_sampled_inputs = false;  // the candidate's time_sample says so
  Json candidate_sample_aliases = Json::array();   // the candidate's time_sample output_aliases
  bool candidate_batch_raises = false;  // the candidate's time_sample answers runtime_error
  std::string candidate_digest = "d";
  bool reference_irreproducible = false;  // the reference's digest changes at every time_start
  int reference_starts = 0;
  // With `handoff` in time_finish, the reference offers and the candidate delivers;
  // handoff_compare answers served (or not) and a match (docs/device-compare.md).
  bool handoff_served = true;
  int handoff_compares = 0, handoff_releases = 0;
  // The reference's output_layout (time_start's reply), which sizes kept samples.
  Json reference_layout = Json{{"tree", {{"kind", "tensor"}, {"index", 0}}},
                               {"tensors", {{{"dtype", "float32"}, {"shape", {3}}}}}};
  bool reference_declines = false;  // time_output/time_finish with handoff: files instead
  std::vector<int> kept[2];         // per side ("reference", "candidate"): keep_as indices kept
  int sample_outputs = 0;           // time_output requests seen
  bool delivered_differs = false;   // the last delivery was of a differing sample output
  std::vector<std::string> log;      // "<side>:<op>[:<method>]" in call order
  // Batches of time_sample (logged once each): the seeds seen so far, and which
  // worker sampled last.
  std::set<int64_t> seen_seeds;
  const void* last_sampler = nullptr;
  std::vector<Json> starts, finishes;  // every time_start and time_finish request
};

// Writes `values` as a tensor file; returns the SHA-256 (hex) of its bytes.
inline std::string WriteFloats(const std::string& path, const std::vector<float>& values) {
  TensorFileWriter w;
  w.SetTree(w.Add<float>({static_cast<int64_t>(values.size())}, values));
  (void)w.WriteTo(path);
  return Sha256Hex(w.Bytes());
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
                               {"output_layout", ref ? t->reference_layout : Json(nullptr)}});
  });
  w.Handle("time_warmup", [t, side](const Json&) {
    t->log.push_back(*side + ":time_warmup");
    Json reply{{"call_ms", t->call_ms}, {"warmup_calls", 3},
               {"sensors", *side == "reference" ? Json{{"source", "nvml"}, {"sm_mhz", 1700}} : Json(nullptr)}};
    if (t->device_call_ms >= 0) reply["device_call_ms"] = t->device_call_ms;
    return FakeWorker::Ok(reply);
  });
  auto captured = std::make_shared<int>(0);  // this worker's graph size
  w.Handle("time_graph", [t, side, captured](const Json& r) {
    t->log.push_back(*side + ":time_graph");
    if (t->graph_fails) return FakeWorker::Ok(Json{{"graph_failed", "no"}});
    int calls = r.value("calls", t->graph_calls);
    if (*side == "candidate" && t->candidate_graph_calls >= 0) calls = t->candidate_graph_calls;
    *captured = calls;
    return FakeWorker::Ok(Json{{"graph_calls", calls}});
  });
  auto flushed = std::make_shared<bool>(false);  // the next sample is cold
  auto fix_earlier = [t, side] {
    if (*side != "candidate" || !t->candidate_fixes_outputs_later) return;
    for (const std::string& path : t->candidate_written)
      if (std::filesystem::exists(path)) WriteFloats(path, t->reference_output);
  };
  w.Handle("time_flush", [t, flushed, fix_earlier](const Json&) {
    fix_earlier();
    ++t->flushes;
    *flushed = true;
    return FakeWorker::Ok();
  });
  // A side's batch of a round: its seeds are all new (it goes first) or all seen (the
  // round's first side had them); a batch ends when another worker samples or the
  // seeds turn from seen to new (the next round, the same side first).
  auto last_fresh = std::make_shared<int>(-1);
  w.Handle("time_sample", [t, side, captured, flushed, last_fresh, fix_earlier](const Json& r) {
    fix_earlier();
    const std::string method = r.value("method", std::string());
    const bool ref = *side == "reference";
    const int64_t seed = r.value("seed", int64_t{-1});
    const int fresh = t->seen_seeds.insert(seed).second ? 1 : 0;
    if (t->last_sampler != last_fresh.get() || fresh != *last_fresh)
      t->log.push_back(*side + ":time_sample:" + method);  // once per batch
    t->last_sampler = last_fresh.get();
    *last_fresh = fresh;
    ++t->samples;
    if (!ref && t->candidate_batch_raises) {
      WorkerReply failed;
      failed.response = Json{{"ok", false}, {"kind", "runtime_error"}, {"message", "boom"}};
      return failed;
    }
    const bool cold = *flushed;
    *flushed = false;
    double sleep_ms = (ref ? t->reference_sleep_ms : t->candidate_sleep_ms) / (cold ? 1 : 2);
    if (ref && !t->reference_sample_jitter_ms.empty())
      sleep_ms += t->reference_sample_jitter_ms[t->samples % t->reference_sample_jitter_ms.size()];
    if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(sleep_ms * 1000)));
    const auto& out = ref || t->candidate_sample_output.empty() ? t->reference_output : t->candidate_sample_output;
    std::string digest;
    if (r.contains("out")) {
      digest = WriteFloats(r["out"], out);
      if (!ref) t->candidate_written.push_back(r["out"]);
      if (!ref && !t->candidate_sample_digest.empty()) digest = t->candidate_sample_digest;
    }
    if (r.contains("keep_as")) t->kept[ref ? 0 : 1].push_back(r["keep_as"].get<int>());
    const double ms = ref ? t->reference_ms : t->candidate_ms;
    Json reply{{"ms", cold ? ms : ms / 2}, {"wall_ms", ms},
               {"inputs_modified", !ref && t->candidate_modifies_sampled_inputs},
               {"output_aliases", ref ? Json::array() : t->candidate_sample_aliases}};
    if (method == "cuda_graph") reply["graph_calls"] = *captured;
    if (r.contains("out")) reply["out_sha256"] = digest;
    return FakeWorker::Ok(reply);
  });
  // A burst takes what its runs would on the device: the side's warm sleep each.
  w.Handle("time_burst", [t, side](const Json& r) {
    ++t->bursts;
    const bool ref = *side == "reference";
    const double burst_ms = ref ? t->reference_burst_ms : t->candidate_burst_ms;
    const double each = burst_ms >= 0 ? burst_ms : (ref ? t->reference_sleep_ms : t->candidate_sleep_ms) / 2;
    const double ms = each * r.value("replays", 1);
    if (ms > 0) std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(ms * 1000)));
    return FakeWorker::Ok();
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
  w.Handle("time_output", [t, side](const Json& r) {
    const bool ref = *side == "reference";
    ++t->sample_outputs;
    auto& kept = t->kept[ref ? 0 : 1];
    auto it = std::find(kept.begin(), kept.end(), r.value("sample", -1));
    if (it == kept.end()) {
      WorkerReply failed;
      failed.response = Json{{"ok", false}, {"kind", "bad_request"}, {"message", "no output kept"}};
      return failed;
    }
    if (!r.value("keep", false)) kept.erase(it);
    const bool sample_differs = !t->candidate_sample_output.empty();
    Json reply = Json::object();
    if (r.contains("handoff") && !(ref && t->reference_declines)) {
      if (ref) {
        reply["handoff"] = Json{{"output_layout", t->reference_layout}};
      } else {
        reply["handoff"] = "delivered";
        t->delivered_differs = sample_differs;
      }
    } else {
      WriteFloats(r["out"], ref || !sample_differs ? t->reference_output : t->candidate_sample_output);
    }
    return FakeWorker::Ok(reply);
  });
  w.Handle("handoff_compare", [t](const Json& r) {
    ++t->handoff_compares;
    Json calls = Json::array();
    if (t->handoff_served && t->delivered_differs) {  // worded by the engine from the files written
      WriteFloats(r["out_reference"], t->reference_output);
      WriteFloats(r["out_candidate"], t->candidate_sample_output);
      calls.push_back(Json{{"match", false}, {"compared", 3}, {"mismatched", 1}, {"max_abs", 1.0}, {"max_rel", 1.0}});
    } else if (t->handoff_served) {
      calls.push_back(Json{{"match", true}, {"compared", 3}, {"mismatched", 0}, {"max_abs", 0.0}, {"max_rel", 0.0}});
    }
    t->delivered_differs = false;
    return FakeWorker::Ok(Json{{"served", t->handoff_served}, {"calls", calls}});
  });
  w.Handle("handoff_release", [t](const Json&) {
    ++t->handoff_releases;
    return FakeWorker::Ok();
  });
}

}  // namespace kvault::testing
