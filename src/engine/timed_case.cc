#include "engine/timed_case.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <vector>

#include "check/tensor_file.h"
#include "engine/output_handoff.h"
#include "engine/timing_statistics.h"
#include "engine/worker_outcome.h"

namespace kvault {
namespace {

constexpr const char* kEvents = "cuda_events";
constexpr const char* kGraph = "cuda_graph";
constexpr const char* kClock = "monotonic_clock";

// The samples one side has sent so far. The candidate's worker is untrusted: a
// field of the wrong type counts as empty and non-numbers are dropped.
struct Series {
  std::vector<double> cold, warm, wall;
  void Clear() { cold.clear(), warm.clear(), wall.clear(); }
  void Append(const Json& batch) {
    for (auto [key, into] : {std::pair{"cold_ms", &cold}, {"warm_ms", &warm}, {"wall_ms", &wall}}) {
      auto it = batch.find(key);
      if (it == batch.end() || !it->is_array()) continue;
      for (const Json& x : *it)
        if (x.is_number()) into->push_back(x.get<double>());
    }
  }
};

double Number(const Json& obj, const char* key, double fallback) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : fallback;
}

Json Field(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? Json(nullptr) : *it;
}

// Writes "<role>_ms", "_iqr_ms", "_samples", "_noise", "_cold_ms", "_warm_ms",
// "_wall_ms" (docs/timing.md); returns the primary median.
double Describe(Json& row, const std::string& role, const Series& s, bool flush) {
  const std::vector<double>& primary = flush ? s.cold : s.warm;
  double median = 0;
  if (!primary.empty()) {
    SeriesSummary m = Summarize(primary);
    median = m.median_ms;
    row[role + "_ms"] = m.median_ms;
    row[role + "_iqr_ms"] = m.iqr_ms;
    row[role + "_samples"] = m.samples;
    row[role + "_noise"] = std::isfinite(m.noise) ? Json(m.noise) : Json(nullptr);
  }
  for (auto [suffix, v] : {std::pair{"_cold", &s.cold}, {"_warm", &s.warm}, {"_wall", &s.wall}}) {
    if (v->empty()) continue;
    row[role + suffix + "_ms"] = Median(*v);
    if (v != &s.wall) row[role + suffix + "_iqr_ms"] = InterquartileRange(*v);
  }
  return median;
}

class CaseTimer {
 public:
  CaseTimer(DeviceSession& session, const TimedCaseRequest& req)
      : session_(session), req_(req), timeout_(req.options.timeouts.time),
        where_("timing case " + req.task.cases[req.case_index].name) {}

  PreparedCase Prepare();
  TimedCase Measure(PreparedCase prepared);

 private:
  // A call on one side; on failure sets result_.failure and returns nullopt.
  std::optional<Json> Call(WorkerRole role, Json request);
  void Fail(OutcomeStatus status, std::string message) {
    Verification v;
    v.status = status;
    v.compiled = true;
    v.message = where_ + ": " + std::move(message);
    result_.failure = std::move(v);
  }
  bool Recheck(const std::string& ref_out, const std::string& cand_out);

  DeviceSession& session_;
  const TimedCaseRequest& req_;
  std::chrono::milliseconds timeout_;
  std::string where_;
  TimedCase result_;
};

std::optional<Json> CaseTimer::Call(WorkerRole role, Json request) {
  auto w = session_.Get(role);
  if (!w) {
    Fail(OutcomeStatus::kInfraError, w.error());
    return std::nullopt;
  }
  WorkerReply r = (*w)->Call(std::move(request), timeout_);
  if (ReplyOk(r)) return r.response;
  if (role == WorkerRole::kCandidate) {
    result_.failure = CandidateFailure(r, where_, timeout_, (*w)->TakeLog());
  } else {
    (*w)->TakeLog();
    if (r.failure != WorkerFailure::kNone) session_.Discard(WorkerRole::kReference);
    Fail(OutcomeStatus::kTaskError, TrustedFailureMessage(r, "the reference"));
  }
  return std::nullopt;
}

bool CaseTimer::Recheck(const std::string& ref_out, const std::string& cand_out) {
  auto ref = TensorFile::Open(ref_out);
  if (!ref) {
    Fail(OutcomeStatus::kInfraError, "reference output of a timed call unreadable: " + ref.error());
    return false;
  }
  auto cand = TensorFile::Open(cand_out);
  if (!cand) {
    Fail(OutcomeStatus::kInfraError, "candidate output of a timed call unreadable: " + cand.error());
    return false;
  }
  CompareReport cmp = Compare(*ref, *cand, req_.tolerance);
  result_.row["recheck"] = cmp.match ? "ok" : "mismatch";
  result_.row["recheck_max_abs_error"] = cmp.max_abs_error;
  if (!cmp.match) {
    Fail(OutcomeStatus::kMismatch, "the output of a timed call differs from the reference: " + cmp.message);
    return false;
  }
  return true;
}

PreparedCase CaseTimer::Prepare() {
  const TimingSettings& t = req_.options.timing;
  const auto began = std::chrono::steady_clock::now();
  PreparedCase prepared;
  // A graph is captured ahead by a side whose calls look short enough for one (the
  // quiet device decides in TimeCase).
  const double graph_below_ms = req_.options.backend == Backend::kCpu || t.graph == GraphMode::kNever ? 0
                                : t.graph == GraphMode::kAlways ? 1e9 : t.graph_below_ms;
  Json start{{"op", "time_start"}, {"case", req_.case_index}, {"seed", req_.seed}, {"flush", t.flush},
             {"graph_below_ms", graph_below_ms}};
  Json ref_start_req = start;
  ref_start_req["side"] = "reference";
  ref_start_req["task"] = req_.task.file.path;
  auto fail = [&] {
    prepared.failure = std::move(result_.failure);
    return std::move(prepared);
  };
  auto ref_start = Call(WorkerRole::kReference, ref_start_req);
  if (!ref_start) return fail();
  Json cand_start_req = start;
  cand_start_req["side"] = "candidate";
  if (const Json layout = Field(*ref_start, "output_layout"); layout.is_object())
    cand_start_req["output_layout"] = layout;
  auto cand_start = Call(WorkerRole::kCandidate, cand_start_req);
  if (!cand_start) return fail();
  if (ReplyString(*cand_start, "input_digest", "") != ReplyString(*ref_start, "input_digest", "")) {
    // The candidate's worker can forge its digest (docs/threat-model.md): the reference
    // worker makes the inputs again; when it reproduces its own, the difference is the
    // candidate's doing, else the task's inputs are not reproducible.
    ref_start_req["fresh"] = true;  // not a side kept from an earlier timing
    auto again = Call(WorkerRole::kReference, ref_start_req);
    if (!again) return fail();
    if (ReplyString(*again, "input_digest", "") == ReplyString(*ref_start, "input_digest", ""))
      Fail(OutcomeStatus::kCrash, "the candidate's worker reported timing inputs that differ from the "
                                  "reference's, which the reference worker reproduces (a forged reply)");
    else
      Fail(OutcomeStatus::kTaskError, "task inputs are not a function of the seed (the reference "
                                      "worker made different timing inputs twice)");
    return fail();
  }
  prepared.reference = std::move(*ref_start);
  prepared.candidate = std::move(*cand_start);
  prepared.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
  return prepared;
}

TimedCase CaseTimer::Measure(PreparedCase prepared) {
  const TimingSettings& t = req_.options.timing;
  // Wall time of each step (docs/timing.md, "Results": stage_ms).
  auto step_began = std::chrono::steady_clock::now();
  Json stage_ms{{"prepare", prepared.ms}};
  auto step_done = [&](const char* step) {
    const auto now = std::chrono::steady_clock::now();
    stage_ms[step] = std::chrono::duration<double, std::milli>(now - step_began).count();
    step_began = now;
  };
  const bool gpu = req_.options.backend != Backend::kCpu;
  int warmup_ms = req_.warmup_ms >= 0 ? req_.warmup_ms : t.warmup_ms;
  bool device_quiet = true;
  if (req_.turn.alone) {
    auto turn = req_.turn.alone();
    if (!turn) {
      Fail(OutcomeStatus::kInfraError, turn.error());
      return std::move(result_);
    }
    device_quiet = turn->device_quiet;
    if (req_.warmup_ms < 0 && turn->warmup_ms >= 0) warmup_ms = turn->warmup_ms;
  }
  step_done("drain");  // the device's lock and other lanes' runs in flight ending
  const Json warmup{{"op", "time_warmup"}, {"warmup_ms", warmup_ms}};
  auto ref_warm = Call(WorkerRole::kReference, warmup);
  if (!ref_warm) return std::move(result_);
  auto cand_warm = Call(WorkerRole::kCandidate, warmup);
  if (!cand_warm) return std::move(result_);
  Json& row = result_.row;
  row["case"] = req_.task.cases[req_.case_index].name;
  row["kind"] = "timing";
  row["warmup_ms"] = warmup_ms;
  row["device_quiet"] = device_quiet;
  row["flush_bytes"] = Field(prepared.reference, "flush_bytes");
  row["reference_kept"] = Field(prepared.reference, "kept") == Json(true);
  row["reference_call_ms"] = Field(*ref_warm, "call_ms");
  row["candidate_call_ms"] = Field(*cand_warm, "call_ms");
  row["reference_device_call_ms"] = Field(*ref_warm, "device_call_ms");
  row["candidate_device_call_ms"] = Field(*cand_warm, "device_call_ms");
  row["sensors_before"] = Field(*ref_warm, "sensors");

  step_done("start");
  std::string method = gpu ? kEvents : kClock;
  // By device time per call (the warm-up's burst; call_ms, which carries a host round
  // trip per call, from workers that send none).
  auto device_ms = [](const Json& start) {
    return Number(start, "device_call_ms", Number(start, "call_ms", 1e9));
  };
  const double fastest = std::min(device_ms(*ref_warm), device_ms(*cand_warm));
  if (gpu && (t.graph == GraphMode::kAlways || (t.graph == GraphMode::kAuto && fastest < t.graph_below_ms)))
    method = kGraph;

  const StoppingRule rule = StoppingRule::From(t);
  const int batch_size = std::max(1, t.batch);
  Series series[2];  // reference, candidate
  const WorkerRole roles[2] = {WorkerRole::kReference, WorkerRole::kCandidate};
  const auto began = std::chrono::steady_clock::now();
  int rounds = 0;
  StopReason stop = StopReason::kContinue;
  while (stop == StopReason::kContinue) {
    for (int k = 0; k < 2; ++k) {
      const int side = rounds % 2 == 0 ? k : 1 - k;  // alternate who goes first
      auto batch = Call(roles[side], Json{{"op", "time_batch"}, {"method", method},
                                          {"cold", t.flush ? batch_size : 0}, {"warm", batch_size}});
      if (!batch) return std::move(result_);
      if (const Json why = Field(*batch, "graph_failed"); !why.is_null()) {
        row["graph_fallback"] = why.is_string() ? why : Json("capture failed");
        method = kEvents;  // both sides change method; samples so far are dropped
        series[0].Clear(), series[1].Clear();
        rounds = -1;
        break;
      }
      if (method == kGraph) row[side == 0 ? "reference_graph_calls" : "candidate_graph_calls"] =
          Field(*batch, "graph_calls");
      const size_t before = series[side].cold.size() + series[side].warm.size();
      series[side].Append(*batch);
      const size_t got = series[side].cold.size() + series[side].warm.size() - before;
      const size_t asked = static_cast<size_t>((t.flush ? 2 : 1) * batch_size);
      if (got != asked) {
        Fail(OutcomeStatus::kInfraError, "a worker sent " + std::to_string(got) + " timing samples for " +
                                             std::to_string(asked) + " asked");
        return std::move(result_);
      }
    }
    ++rounds;
    const double elapsed =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
    const auto& a = t.flush ? series[0].cold : series[0].warm;
    const auto& b = t.flush ? series[1].cold : series[1].warm;
    stop = rounds == 0 ? StopReason::kContinue : rule.Decide({&a, &b}, elapsed);
  }
  row["method"] = method;
  row["rounds"] = rounds;
  row["stop"] = std::string(ToString(stop));
  result_.reference_ms = Describe(row, "reference", series[0], t.flush);
  result_.candidate_ms = Describe(row, "candidate", series[1], t.flush);

  step_done("sampling");
  if (req_.turn.share) req_.turn.share();  // the re-check needs no quiet device
  bool holding = true;
  auto done_with_device = [&] {
    if (holding && req_.turn.done) req_.turn.done();
    holding = false;
  };
  const std::string stem = req_.scratch + "/timed_" + std::to_string(req_.case_index);
  // The candidate's worker writes only in its own folder (DeviceSession::Folder).
  const std::string& own = session_.Folder(WorkerRole::kCandidate);
  const std::string cand_dir = own.empty() ? req_.scratch : own;
  const std::string cand_out = cand_dir + "/timed_" + std::to_string(req_.case_index) + "_candidate.kvt";
  Json finish{{"op", "time_finish"}};
  const HandoffSpec handoff = NewHandoff(cand_dir, 1);
  if (t.recheck) finish["out"] = stem + "_reference.kvt";
  if (t.recheck && req_.outputs_on_device) finish["handoff"] = handoff.ToJson();
  Json ref_finish_req = finish;
  ref_finish_req["keep"] = true;  // for the next candidate's timing of this case
  auto ref_finish = Call(WorkerRole::kReference, ref_finish_req);
  if (!ref_finish) return std::move(result_);
  DeviceOffer offer;  // ended on every way out
  if (const Json h = Field(*ref_finish, "handoff"); h.is_object())
    offer = DeviceOffer([this](const Json& request) {
      return session_.AskReference(request, timeout_, "the reference");
    }, h.value("output_layout", Json()));
  if (t.recheck) finish["out"] = cand_out;
  finish.erase("handoff");
  if (offer.open()) {
    finish["handoff"] = Json{{"socket", handoff.socket}, {"secret", handoff.secret}};
    finish["output_layout"] = offer.layout();
  }
  auto cand_finish = Call(WorkerRole::kCandidate, finish);
  if (!cand_finish) return std::move(result_);
  row["sensors_after"] = Field(*ref_finish, "sensors");
  if (Field(*cand_finish, "inputs_modified") != Json(false)) {
    Fail(OutcomeStatus::kMismatch, "the candidate modified its inputs while being timed");
    return std::move(result_);
  }
  if (t.recheck && offer.open() && ReplyString(*cand_finish, "handoff", "") == "delivered") {
    row["recheck_on"] = "device";
    auto got = offer.Compare(req_.tolerance, stem + "_handoff", 1);
    if (!got) {
      Fail(OutcomeStatus::kInfraError, "comparing on the device: " + got.error());
      return std::move(result_);
    }
    if (!got->served) {
      Fail(OutcomeStatus::kCrash, "the candidate's worker reported timed outputs it never handed over "
                                  "(a forged reply)");
      return std::move(result_);
    }
    const CompareReport& cmp = got->calls[0];
    row["recheck"] = cmp.match ? "ok" : "mismatch";
    row["recheck_max_abs_error"] = cmp.max_abs_error;
    if (!cmp.match) {
      Fail(OutcomeStatus::kMismatch, "the output of a timed call differs from the reference: " + cmp.message);
      return std::move(result_);
    }
  } else if (t.recheck) {
    if (offer.open()) {  // the candidate's worker wrote a file: so does the reference worker
      if (auto st = offer.WriteTo(stem + "_reference.kvt"); !st) {
        Fail(OutcomeStatus::kTaskError, st.error());
        return std::move(result_);
      }
    }
    done_with_device();
    const bool same = Recheck(stem + "_reference.kvt", cand_out);
    std::error_code ignored;
    std::filesystem::remove(stem + "_reference.kvt", ignored);
    std::filesystem::remove(cand_out, ignored);
    if (!same) return std::move(result_);
  } else {
    row["recheck"] = "skipped";
  }
  done_with_device();
  step_done("finish");
  row["stage_ms"] = stage_ms;
  const double ref = result_.reference_ms, cand = result_.candidate_ms;
  row["speedup"] = cand > 0 && std::isfinite(ref / cand) ? Json(ref / cand) : Json(nullptr);
  if (t.flush && row.contains("reference_warm_ms") && row.contains("candidate_warm_ms")) {
    const double rw = row["reference_warm_ms"].get<double>(), cw = row["candidate_warm_ms"].get<double>();
    row["warm_speedup"] = cw > 0 && std::isfinite(rw / cw) ? Json(rw / cw) : Json(nullptr);
  }
  return std::move(result_);
}

}  // namespace

PreparedCase PrepareCase(DeviceSession& session, const TimedCaseRequest& request) {
  return CaseTimer(session, request).Prepare();
}

TimedCase TimeCase(DeviceSession& session, const TimedCaseRequest& request, PreparedCase prepared) {
  return CaseTimer(session, request).Measure(std::move(prepared));
}

}  // namespace kvault
