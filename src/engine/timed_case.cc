#include "engine/timed_case.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>
#include <vector>

#include "check/aliasing.h"
#include "check/tensor_file.h"
#include "engine/output_check.h"
#include "engine/output_handoff.h"
#include "engine/output_layout.h"
#include "engine/timing_statistics.h"
#include "engine/worker_outcome.h"
#include "worker/protocol.h"

namespace kvault {
namespace {

// Sample outputs of a round are all compared up to this size each, else
// kComparedPerRound of them, chosen after the round.
constexpr uintmax_t kCompareAllBytes = 16 << 20;
constexpr size_t kComparedPerRound = 3;
// Outputs of one round's samples a side keeps on the device at most, together: above
// it (outputs of about 800 MiB a call) timed samples are not compared (docs/timing.md,
// "Known limits").
constexpr uintmax_t kKeptSampleBytes = uintmax_t{8} << 30;
// Added to the spread of the reference's overhead in the engine clock's bound
// (TimingSettings::clock_slack): below timer resolution on any host.
constexpr double kClockFloorMs = 0.02;
// When the samples' clock is blind (their device time is within the allowance, as on
// a busy host), bursts: each side runs about kBurstMs of the reference's device time
// back to back (at most kBurstMaxReplays runs), kBurstPairs times a short and a long
// burst, clocked; the long one's time less the short one's is device time. A
// candidate whose bursts take more than kBurstSlack beyond what its samples reported
// (times the reference's bursts' ratio to its reports) gets the clock's time.
constexpr double kBurstMs = 20.0;
constexpr int kBurstMaxReplays = 2000;
constexpr int kBurstPairs = 3;
constexpr double kBurstSlack = 0.5;

constexpr const char* kRoles[2] = {"reference", "candidate"};
constexpr WorkerRole kWorkerRoles[2] = {WorkerRole::kReference, WorkerRole::kCandidate};

// The inputs of sample `index` of a round: a seed both sides are given only with the
// sample's own request, drawn by the engine for the round.
int64_t SampleSeed(uint64_t nonce, int index) {
  return static_cast<int64_t>(((nonce >> 2) + static_cast<uint64_t>(index)) & ((uint64_t{1} << 62) - 1));
}

constexpr const char* kEvents = protocol::kTimerEvents;
constexpr const char* kGraph = protocol::kTimerGraph;
constexpr const char* kClock = protocol::kTimerClock;

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

// What one side's samples were: the worker's report per sample, in the order taken,
// and what the engine's clock saw of the same requests.
struct SideSamples {
  Series series;                 // reported per call (ms), cold and warm
  std::vector<double> reported;  // per sample, the reported time of the whole sample (ms x calls)
  std::vector<double> clocked;   // per sample, the engine's wall time of its request (ms)
  std::vector<bool> cold;        // per sample, whether it followed a flush
  std::vector<Json> aliases;     // per sample of the current round, its `output_aliases`
};

class CaseTimer {
 public:
  CaseTimer(DeviceSession& session, const TimedCaseRequest& req)
      : session_(session), req_(req), timeout_(req.options.timeouts.time),
        where_("timing case " + req.task.cases[req.case_index].name), rng_(std::random_device{}()) {}

  PreparedCase Prepare();
  TimedCase Measure(PreparedCase prepared);

 private:
  // Measure's steps, in order (docs/timing.md, "For each performance case").
  bool TakeTurn();        // the device's lock; other lanes' device work stops
  bool WarmUp();          // both sides warm up (the candidate's processes stopped for the reference's)
  bool ChooseMethod();    // events or the clock, or a graph of the same calls on both sides
  bool SampleRounds();    // rounds of samples until the stopping rule; every round's outputs checked
  void BoundByEngineClock();  // the candidate's samples are at least what the engine clocked
  bool BoundByBursts();   // where that clock is blind, long bursts of both sides clocked
  void Summarize();       // medians, spreads and the speedup into the record
  bool RecheckOutput();   // one more call on the next seed's inputs, compared (beside other lanes)

  // One side's samples of one round; false when it failed (result_.failure is set).
  bool SampleSide(int side, int round, uint64_t nonce);
  // The round's candidate outputs that alias an input where the reference's do not.
  bool CheckAliasing(int round);
  // How the round's sample outputs reach the comparison: kept on the device by both
  // sides, written to files, or (too large to keep) not at all; row["samples_on"].
  void ChooseSampleOutputs();
  // Compares the round's sample outputs of both sides (all, or kComparedPerRound at
  // random when they are large) and removes them.
  bool CompareRound(int round, uint64_t nonce);
  // Sample `index` of the round: the outputs both sides kept handed over (on the device
  // when the reference offers and the candidate delivers, else files) and compared.
  bool CompareKeptSample(int round, int index);
  std::string SamplePath(int side, int round, int index) const;
  int SamplesPerRound() const;
  // The offer a reference reply makes (its `handoff`), or none.
  DeviceOffer OfferIn(const Json& reference_reply);
  // A call on one side; on failure sets result_.failure and returns nullopt.
  std::optional<Json> Call(WorkerRole role, Json request);
  // A call on one side timed by the engine's clock (ms into *clocked).
  std::optional<Json> ClockedCall(WorkerRole role, Json request, double* clocked);
  // The device time per call of `side`'s bursts of `replays` runs on the engine's
  // clock (median over kBurstPairs); false when a burst failed.
  bool BurstPerCall(int side, int replays, double* per_call_ms);
  void Fail(OutcomeStatus status, std::string message) {
    Verification v;
    v.status = status;
    v.compiled = true;
    v.message = where_ + ": " + std::move(message);
    result_.failure = std::move(v);
  }
  // The candidate's outputs of timed calls against the reference's (output_check.h);
  // false with result_.failure set when they differ or cannot be compared.
  // `where` names the row field that says where they were compared ("recheck_on").
  bool CompareTimedOutputs(DeviceOffer& offer, const Json& candidate_reply, const OutputFiles& files,
                           const char* where, const std::function<void()>& device_done = {});
  void StepDone(const char* step);
  void GiveBack() {
    if (holding_ && req_.turn.done) req_.turn.done();
    holding_ = false;
  }

  DeviceSession& session_;
  const TimedCaseRequest& req_;
  std::chrono::milliseconds timeout_;
  std::string where_;
  std::mt19937_64 rng_;  // seeds of samples and which outputs are compared: never sent ahead
  TimedCase result_;
  PreparedCase prepared_;
  Json warm_[2];
  std::string method_;
  int graph_calls_ = 1;  // calls per graph sample, the same on both sides
  bool clock_blind_ = false;  // BoundByEngineClock could not have seen a 2x forgery
  SideSamples samples_[2];  // reference, candidate
  enum class SampleOutputs { kFiles, kKept, kUnchecked } sample_outputs_ = SampleOutputs::kFiles;
  uintmax_t output_bytes_ = 0;  // of one output of the reference (its layout), when kept
  int compared_ = 0;
  bool holding_ = false;  // the turn's device hold, until the re-check's device work ends
  int warmup_ms_ = 0;
  Json stage_ms_ = Json::object();
  std::chrono::steady_clock::time_point step_began_ = std::chrono::steady_clock::now();
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

bool CaseTimer::CompareTimedOutputs(DeviceOffer& offer, const Json& candidate_reply, const OutputFiles& files,
                                    const char* where, const std::function<void()>& device_done) {
  ComparedOutputs got = CompareOutputs(offer, candidate_reply, files, req_.tolerance, device_done);
  if (got.failure) {
    Fail(got.failure->status, got.failure->message);
    return false;
  }
  result_.row[where] = got.on_device ? "device" : "files";
  for (const CompareReport& cmp : got.calls) {
    result_.row["recheck_max_abs_error"] =
        std::max(cmp.max_abs_error, Number(result_.row, "recheck_max_abs_error", 0.0));
    if (!cmp.match) {
      result_.row["recheck"] = "mismatch";
      Fail(OutcomeStatus::kMismatch, "the output of a timed call differs from the reference: " + cmp.message);
      return false;
    }
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
  TimeStartRequest ref_start_req{.side = protocol::kSideReference,
                                 .task = req_.task.file.path,
                                 .case_index = req_.case_index,
                                 .seed = req_.seed,
                                 .flush = t.flush,
                                 .graph_below_ms = graph_below_ms};
  auto fail = [&] {
    prepared.failure = std::move(result_.failure);
    return std::move(prepared);
  };
  auto ref_start = Call(WorkerRole::kReference, ref_start_req.ToJson());
  if (!ref_start) return fail();
  TimeStartRequest cand_start_req = ref_start_req;
  cand_start_req.side = protocol::kSideCandidate;
  cand_start_req.task.clear();
  if (const Json layout = Field(*ref_start, protocol::field::kOutputLayout); layout.is_object())
    cand_start_req.output_layout = layout;
  auto cand_start = Call(WorkerRole::kCandidate, cand_start_req.ToJson());
  if (!cand_start) return fail();
  // The candidate's worker can forge its digest (engine/output_check.h).
  auto make_again = [&]() -> Result<std::string> {
    TimeStartRequest again = ref_start_req;
    again.fresh = true;  // not a side kept from an earlier timing
    auto reply = session_.AskReference(again.ToJson(), timeout_, "the reference");
    if (!reply) return Error{reply.error()};
    return ReplyString(*reply, protocol::field::kInputDigest, "");
  };
  if (auto fault = InputDigestVerdict(ReplyString(*ref_start, protocol::field::kInputDigest, ""),
                                      ReplyString(*cand_start, protocol::field::kInputDigest, ""), make_again)) {
    Fail(fault->status, "timing inputs: " + fault->message);
    return fail();
  }
  prepared.reference = std::move(*ref_start);
  prepared.candidate = std::move(*cand_start);
  prepared.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
  return prepared;
}

TimedCase CaseTimer::Measure(PreparedCase prepared) {
  prepared_ = std::move(prepared);
  stage_ms_["prepare"] = prepared_.ms;
  step_began_ = std::chrono::steady_clock::now();
  if (!TakeTurn()) return std::move(result_);
  StepDone("drain");  // the device's lock and other lanes' runs in flight ending
  if (!WarmUp()) return std::move(result_);
  StepDone("start");
  if (!ChooseMethod() || !SampleRounds()) return std::move(result_);
  BoundByEngineClock();
  if (!BoundByBursts()) return std::move(result_);
  Summarize();
  StepDone("sampling");
  if (!RecheckOutput()) return std::move(result_);
  StepDone("finish");
  result_.row["stage_ms"] = stage_ms_;
  return std::move(result_);
}

void CaseTimer::StepDone(const char* step) {
  const auto now = std::chrono::steady_clock::now();
  stage_ms_[step] = std::chrono::duration<double, std::milli>(now - step_began_).count();
  step_began_ = now;
}

bool CaseTimer::TakeTurn() {
  Json& row = result_.row;
  row["case"] = req_.task.cases[req_.case_index].name;
  row["kind"] = "timing";
  row["device_quiet"] = true;
  warmup_ms_ = req_.warmup_ms >= 0 ? req_.warmup_ms : req_.options.timing.warmup_ms;
  if (!req_.turn.alone) {
    holding_ = true;
    return true;
  }
  auto turn = req_.turn.alone();
  if (!turn) {
    Fail(OutcomeStatus::kInfraError, turn.error());
    return false;
  }
  holding_ = true;
  row["device_quiet"] = turn->device_quiet;
  if (req_.warmup_ms < 0 && turn->warmup_ms >= 0) warmup_ms_ = turn->warmup_ms;
  return true;
}

bool CaseTimer::WarmUp() {
  const Json warmup = TimeWarmupRequest{warmup_ms_}.ToJson();
  {
    auto frozen = session_.FreezeCandidate();
    auto ref = Call(WorkerRole::kReference, warmup);
    if (!ref) return false;
    warm_[0] = std::move(*ref);
  }
  auto cand = Call(WorkerRole::kCandidate, warmup);
  if (!cand) return false;
  warm_[1] = std::move(*cand);
  Json& row = result_.row;
  row["warmup_ms"] = warmup_ms_;
  row["flush_bytes"] = Field(prepared_.reference, "flush_bytes");
  row["reference_kept"] = Field(prepared_.reference, "kept") == Json(true);
  row["reference_call_ms"] = Field(warm_[0], "call_ms");
  row["candidate_call_ms"] = Field(warm_[1], "call_ms");
  row["reference_device_call_ms"] = Field(warm_[0], "device_call_ms");
  row["candidate_device_call_ms"] = Field(warm_[1], "device_call_ms");
  row["sensors_before"] = Field(warm_[0], "sensors");
  return true;
}

bool CaseTimer::ChooseMethod() {
  const TimingSettings& t = req_.options.timing;
  const bool gpu = req_.options.backend != Backend::kCpu;
  method_ = gpu ? kEvents : kClock;
  // By device time per call (the warm-up's burst; call_ms, which carries a host round
  // trip per call, from workers that send none).
  auto device_ms = [](const Json& warm) { return Number(warm, "device_call_ms", Number(warm, "call_ms", 1e9)); };
  const double fastest = std::min(device_ms(warm_[0]), device_ms(warm_[1]));
  if (!gpu || !(t.graph == GraphMode::kAlways || (t.graph == GraphMode::kAuto && fastest < t.graph_below_ms)))
    return true;
  // The reference sizes its graph on the quiet device (trusted); the candidate captures
  // as many calls, so that a sample's time per call is the engine's division of one
  // replay by a number it chose, never the candidate's claim. A candidate that can
  // hold fewer (its outputs' memory) sets the number for both.
  std::optional<Json> ref;
  {
    auto frozen = session_.FreezeCandidate();
    ref = Call(WorkerRole::kReference, TimeGraphRequest{}.ToJson());
  }
  if (!ref) return false;
  auto fallback = [&](const Json& why) {
    result_.row["graph_fallback"] = why.is_string() ? why : Json("capture failed");
    return true;  // both sides use events
  };
  if (const Json why = Field(*ref, "graph_failed"); !why.is_null()) return fallback(why);
  const int ref_calls = static_cast<int>(Number(*ref, "graph_calls", 0));
  if (ref_calls < 1) {
    Fail(OutcomeStatus::kTaskError, "the reference's worker captured a graph of no calls");
    return false;
  }
  auto cand = Call(WorkerRole::kCandidate, TimeGraphRequest{ref_calls}.ToJson());
  if (!cand) return false;
  if (const Json why = Field(*cand, "graph_failed"); !why.is_null()) return fallback(why);
  const int cand_calls = static_cast<int>(Number(*cand, "graph_calls", 0));
  if (cand_calls < 1 || cand_calls > ref_calls) {
    Fail(OutcomeStatus::kCrash, "the candidate's worker reported a graph of " + std::to_string(cand_calls) +
                                    " calls for " + std::to_string(ref_calls) + " asked (a forged reply)");
    return false;
  }
  if (cand_calls < ref_calls) {
    auto frozen = session_.FreezeCandidate();
    auto again = Call(WorkerRole::kReference, TimeGraphRequest{cand_calls}.ToJson());
    if (!again) return false;
    if (const Json why = Field(*again, "graph_failed"); !why.is_null()) return fallback(why);
    if (static_cast<int>(Number(*again, "graph_calls", 0)) != cand_calls) {
      Fail(OutcomeStatus::kTaskError, "the reference's worker did not capture the graph size asked");
      return false;
    }
  }
  graph_calls_ = cand_calls;
  method_ = kGraph;
  result_.row["reference_graph_calls"] = graph_calls_;
  result_.row["candidate_graph_calls"] = graph_calls_;
  return true;
}

int CaseTimer::SamplesPerRound() const {
  const TimingSettings& t = req_.options.timing;
  return (t.flush ? 2 : 1) * std::max(1, t.batch);
}

std::string CaseTimer::SamplePath(int side, int round, int index) const {
  const std::string& dir = side == 1 ? session_.CandidateFolder(req_.scratch) : req_.scratch;
  return dir + "/timed_" + std::to_string(req_.case_index) + "_r" + std::to_string(round) + "_" +
         std::to_string(index) + "_" + kRoles[side] + ".kvt";
}

bool CaseTimer::SampleRounds() {
  const TimingSettings& t = req_.options.timing;
  ChooseSampleOutputs();
  const StoppingRule rule = StoppingRule::From(t);
  const auto began = std::chrono::steady_clock::now();
  int rounds = 0;
  double compare_ms = 0;  // of the rounds' time, comparing their samples' outputs
  StopReason stop = StopReason::kContinue;
  while (stop == StopReason::kContinue) {
    const uint64_t nonce = rng_();
    for (int k = 0; k < 2; ++k) {
      const int side = rounds % 2 == 0 ? k : 1 - k;  // alternate who goes first
      if (!SampleSide(side, rounds, nonce)) return false;
    }
    if (!CheckAliasing(rounds)) return false;
    const auto compare_began = std::chrono::steady_clock::now();
    if (sample_outputs_ != SampleOutputs::kUnchecked && !CompareRound(rounds, nonce)) return false;
    compare_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - compare_began).count();
    ++rounds;
    const double elapsed =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
    const auto& a = t.flush ? samples_[0].series.cold : samples_[0].series.warm;
    const auto& b = t.flush ? samples_[1].series.cold : samples_[1].series.warm;
    stop = rule.Decide({&a, &b}, elapsed);
  }
  result_.row["method"] = method_;
  result_.row["rounds"] = rounds;
  result_.row["stop"] = std::string(ToString(stop));
  result_.row["samples_compared"] = compared_;
  stage_ms_["sampling_compare"] = compare_ms;
  return true;
}

bool CaseTimer::SampleSide(int side, int round, uint64_t nonce) {
  const TimingSettings& t = req_.options.timing;
  const int n = SamplesPerRound();
  const int cold = t.flush ? std::max(1, t.batch) : 0;
  // Nothing of the candidate's runs while the reference is timed: not a process it
  // left behind, not a thread of its worker.
  std::unique_ptr<FrozenTree> frozen;
  if (side == 0) frozen = session_.FreezeCandidate();
  SideSamples& got = samples_[side];
  got.aliases.clear();
  std::mt19937_64 calls(nonce ^ 0x9e3779b97f4a7c15ULL);  // the graph call whose output is kept
  for (int i = 0; i < n; ++i) {
    const bool flushed = i < cold;
    if (flushed && !Call(kWorkerRoles[side], TimeFlushRequest{}.ToJson())) return false;
    TimeSampleRequest request{method_, SampleSeed(nonce, i)};
    if (method_ == kGraph) request.call = static_cast<int64_t>(calls() % static_cast<uint64_t>(graph_calls_));
    if (sample_outputs_ == SampleOutputs::kFiles) request.out = SamplePath(side, round, i);
    if (sample_outputs_ == SampleOutputs::kKept) request.keep_as = i;
    double clocked = 0;
    auto reply = ClockedCall(kWorkerRoles[side], request.ToJson(), &clocked);
    if (!reply) return false;
    const Json ms = Field(*reply, protocol::field::kMs);
    if (!ms.is_number() || !std::isfinite(ms.get<double>()) || ms.get<double>() < 0) {
      Fail(side == 1 ? OutcomeStatus::kCrash : OutcomeStatus::kTaskError,
           std::string("the ") + kRoles[side] + "'s worker sent no time for a sample");
      return false;
    }
    if (method_ == kGraph && Number(*reply, "graph_calls", -1) != graph_calls_) {
      Fail(side == 1 ? OutcomeStatus::kCrash : OutcomeStatus::kTaskError,
           std::string("the ") + kRoles[side] + "'s worker replayed a graph of another size (a forged reply)");
      return false;
    }
    if (side == 1 && Field(*reply, "inputs_modified") != Json(false)) {
      Fail(OutcomeStatus::kMismatch, "the candidate modified its inputs while being timed");
      return false;
    }
    const double per_call = ms.get<double>();
    (flushed ? got.series.cold : got.series.warm).push_back(per_call);
    if (const Json wall = Field(*reply, "wall_ms"); wall.is_number()) got.series.wall.push_back(wall.get<double>());
    got.aliases.push_back(Field(*reply, protocol::field::kOutputAliases));
    got.reported.push_back(per_call * graph_calls_);
    got.clocked.push_back(clocked);
    got.cold.push_back(flushed);
  }
  return true;
}

bool CaseTimer::CheckAliasing(int round) {
  // A timed call that hands back a view of its input does no work, and its values may
  // be right (check/aliasing.h): allowed only where the reference's output of the same
  // sample aliases an input too.
  const auto& ref = samples_[0].aliases;
  const auto& cand = samples_[1].aliases;
  auto reply_of = [](const Json& aliases) {
    Json reply = Json::object();
    if (!aliases.is_null()) reply["output_aliases"] = aliases;
    return reply;
  };
  for (size_t i = 0; i < cand.size() && i < ref.size(); ++i) {
    auto theirs = OutputAliases(reply_of(cand[i]));
    if (!theirs) {
      Fail(OutcomeStatus::kCrash, "the candidate's worker sent a malformed output_aliases: " + theirs.error());
      return false;
    }
    if (theirs->empty()) continue;
    auto ours = OutputAliases(reply_of(ref[i]));
    if (!ours) {
      Fail(OutcomeStatus::kTaskError, "the reference's worker sent a malformed output_aliases: " + ours.error());
      return false;
    }
    if (std::string why = ForbiddenAliasing(*theirs, *ours); !why.empty()) {
      Fail(OutcomeStatus::kMismatch, "a timed call's " + why + " (timed sample " + std::to_string(i) +
                                         " of round " + std::to_string(round) + ")");
      return false;
    }
  }
  return true;
}

void CaseTimer::ChooseSampleOutputs() {
  sample_outputs_ = SampleOutputs::kFiles;
  if (req_.outputs_on_device) {
    // Outputs this large are compared on the device: a file of each sample would take
    // longer than the samples. Both sides keep each sample's output there until the
    // engine has drawn the ones it compares, as long as a round's fit.
    const auto bytes = OutputLayoutBytes(Field(prepared_.reference, protocol::field::kOutputLayout));
    output_bytes_ = bytes.value_or(0);
    sample_outputs_ = bytes && *bytes * static_cast<uintmax_t>(SamplesPerRound()) <= kKeptSampleBytes
                          ? SampleOutputs::kKept
                          : SampleOutputs::kUnchecked;
  }
  static constexpr const char* kNames[] = {"files", "device", "unchecked"};
  result_.row["samples_on"] = kNames[static_cast<int>(sample_outputs_)];
}

bool CaseTimer::CompareRound(int round, uint64_t nonce) {
  const int n = SamplesPerRound();
  std::vector<int> chosen(n);
  for (int i = 0; i < n; ++i) chosen[i] = i;
  uintmax_t bytes = output_bytes_;
  std::error_code size_error;
  if (sample_outputs_ == SampleOutputs::kFiles) bytes = std::filesystem::file_size(SamplePath(0, round, 0), size_error);
  if (size_error || bytes > kCompareAllBytes) {  // large outputs: some, at random, after the fact
    std::shuffle(chosen.begin(), chosen.end(), rng_);
    chosen.resize(std::min<size_t>(chosen.size(), kComparedPerRound));
  }
  bool same = true;
  for (int i : chosen) {
    if (sample_outputs_ == SampleOutputs::kKept) {
      same = CompareKeptSample(round, i);
    } else {
      DeviceOffer none;  // written to files by both sides
      const OutputFiles files{.reference = SamplePath(0, round, i), .candidate = {SamplePath(1, round, i)},
                              .remove_reference = true};
      same = CompareTimedOutputs(none, Json::object(), files, "samples_on");
    }
    if (!same) {
      result_.failure->message += " (timed sample " + std::to_string(i) + " of round " + std::to_string(round) +
                                  ", inputs of seed " + std::to_string(SampleSeed(nonce, i)) + ")";
      break;
    }
    ++compared_;
  }
  std::error_code ignored;
  for (int i = 0; i < n; ++i)
    for (int side : {0, 1}) std::filesystem::remove(SamplePath(side, round, i), ignored);
  return same;
}

DeviceOffer CaseTimer::OfferIn(const Json& reference_reply) {
  const Json h = Field(reference_reply, protocol::field::kHandoff);
  if (!h.is_object()) return DeviceOffer();
  return DeviceOffer([this](const Json& request) { return session_.AskReference(request, timeout_, "the reference"); },
                     h.value(protocol::field::kOutputLayout, Json()));
}

bool CaseTimer::CompareKeptSample(int round, int index) {
  const HandoffSpec handoff = NewHandoff(session_.CandidateFolder(req_.scratch), 1);
  const std::string ref_out = SamplePath(0, round, index), cand_out = SamplePath(1, round, index);
  auto ref = Call(WorkerRole::kReference, TimeOutputRequest{index, ref_out, handoff.ToJson()}.ToJson());
  if (!ref) return false;
  DeviceOffer offer = OfferIn(*ref);  // ended on every way out
  TimeOutputRequest to_candidate{index, cand_out};
  if (offer.open()) to_candidate.handoff = handoff.Delivery(), to_candidate.output_layout = offer.layout();
  auto cand = Call(WorkerRole::kCandidate, to_candidate.ToJson());
  if (!cand) return false;
  const OutputFiles files{.reference = ref_out, .candidate = {cand_out}, .remove_reference = true,
                          .device_stem = req_.scratch + "/timed_" + std::to_string(req_.case_index) + "_r" +
                                         std::to_string(round) + "_" + std::to_string(index) + "_handoff"};
  return CompareTimedOutputs(offer, *cand, files, "samples_on");
}

void CaseTimer::BoundByEngineClock() {
  // The worker's clock runs in the candidate's process; the engine's does not. A sample
  // request does the same work on both sides besides the timed call (fresh inputs, the
  // output written), so the reference's requests say how long that takes; what the
  // candidate's requests took beyond it is time its calls took, whatever its worker
  // reported (docs/timing.md, "What the engine trusts").
  SideSamples& ref = samples_[0];
  SideSamples& cand = samples_[1];
  if (ref.clocked.empty() || cand.clocked.empty()) return;
  std::vector<double> overhead;
  for (size_t i = 0; i < ref.clocked.size(); ++i) overhead.push_back(std::max(0.0, ref.clocked[i] - ref.reported[i]));
  const double typical = Median(overhead);
  // How well that median is known: IQR / 1.349 estimates a standard deviation, times
  // sqrt(pi/2) / sqrt(n) the median's standard error; twice that is the allowance.
  const double spread = 2 * 1.2533 * InterquartileRange(overhead) / 1.349 / std::sqrt(overhead.size());
  std::vector<double> floor(cand.clocked.size()), primary_floor, primary_reported;
  const bool flush = req_.options.timing.flush;
  for (size_t i = 0; i < cand.clocked.size(); ++i) {
    floor[i] = std::max(0.0, cand.clocked[i] - typical) / graph_calls_;
    if (cand.cold[i] == flush) {
      primary_floor.push_back(floor[i]);
      primary_reported.push_back(cand.reported[i] / graph_calls_);
    }
  }
  if (primary_floor.empty()) return;
  const double reported = Median(primary_reported), clocked = Median(primary_floor);
  const double slack = req_.options.timing.clock_slack;
  const bool applied = clocked > reported * (1 + slack) + (spread + kClockFloorMs) / graph_calls_;
  Json each = Json::array();  // per sample, to the microsecond: what the allowance comes from
  for (double o : overhead) each.push_back(std::round(o * 1000) / 1000);
  // Blind: a candidate whose requests took twice what it reported would still be
  // within the allowance (a sample's device time is small beside the host's noise).
  clock_blind_ = !applied && reported <= (spread + kClockFloorMs) / graph_calls_;
  result_.row["engine_clock"] = Json{{"reference_overhead_ms", typical},
                                     {"reference_overheads_ms", each},
                                     {"allowance_ms", spread},
                                     {"candidate_reported_ms", reported},
                                     {"candidate_clocked_ms", clocked},
                                     {"applied", applied},
                                     {"blind", clock_blind_}};
  if (!applied) return;
  // The candidate's worker reported less than its requests took: each of its samples is
  // at least what the engine's clock allows.
  Series bounded;
  bounded.wall = cand.series.wall;
  for (size_t i = 0; i < cand.clocked.size(); ++i)
    (cand.cold[i] ? bounded.cold : bounded.warm).push_back(std::max(cand.reported[i] / graph_calls_, floor[i]));
  cand.series = std::move(bounded);
}

bool CaseTimer::BoundByBursts() {
  if (!clock_blind_) return true;
  const std::vector<double>& ref_warm = samples_[0].series.warm;
  const std::vector<double>& cand_warm = samples_[1].series.warm;
  if (ref_warm.empty() || cand_warm.empty()) return true;
  const double ref_call = Median(ref_warm), cand_call = Median(cand_warm);
  const double run_ms = std::max(ref_call * graph_calls_, 1e-6);
  const int replays = static_cast<int>(std::clamp(std::ceil(kBurstMs / run_ms), 1.0, double{kBurstMaxReplays}));
  double clocked[2] = {0, 0};
  for (int side = 0; side < 2; ++side)
    if (!BurstPerCall(side, replays, &clocked[side])) return false;
  // What the reference's bursts take for what it reported is what the candidate's may
  // take for its report: a ratio, since the host's load in a burst stretches both
  // alike (on the CPU, a loaded host's bursts ran 2-3.5x the reported time).
  const double ratio = ref_call > 0 ? std::max(1.0, clocked[0] / ref_call) : 1.0;
  const double expected = cand_call * ratio;
  const bool applied = clocked[1] > expected * (1 + kBurstSlack) + kClockFloorMs / graph_calls_ / replays;
  result_.row["engine_clock"]["bursts"] = Json{{"replays", replays},
                                               {"pairs", kBurstPairs},
                                               {"reference_reported_ms", ref_call},
                                               {"reference_clocked_ms", clocked[0]},
                                               {"candidate_reported_ms", cand_call},
                                               {"candidate_clocked_ms", clocked[1]},
                                               {"applied", applied}};
  if (!applied || expected <= 0) return true;
  // The candidate's reports were short by this factor: every sample is scaled by it.
  const double factor = clocked[1] / expected;
  Series& series = samples_[1].series;
  for (std::vector<double>* v : {&series.cold, &series.warm})
    for (double& x : *v) x *= factor;
  return true;
}

bool CaseTimer::BurstPerCall(int side, int replays, double* per_call_ms) {
  std::vector<double> per_call;
  for (int k = 0; k < kBurstPairs; ++k) {
    std::unique_ptr<FrozenTree> frozen;
    if (side == 0) frozen = session_.FreezeCandidate();
    double short_ms = 0, long_ms = 0;
    if (!ClockedCall(kWorkerRoles[side], TimeBurstRequest{method_, 1}.ToJson(), &short_ms)) return false;
    if (!ClockedCall(kWorkerRoles[side], TimeBurstRequest{method_, 1 + replays}.ToJson(), &long_ms)) return false;
    per_call.push_back(std::max(0.0, long_ms - short_ms) / replays / graph_calls_);
  }
  *per_call_ms = Median(per_call);
  return true;
}

void CaseTimer::Summarize() {
  const bool flush = req_.options.timing.flush;
  Json& row = result_.row;
  result_.reference_ms = Describe(row, "reference", samples_[0].series, flush);
  result_.candidate_ms = Describe(row, "candidate", samples_[1].series, flush);
  const double ref = result_.reference_ms, cand = result_.candidate_ms;
  row["speedup"] = cand > 0 && std::isfinite(ref / cand) ? Json(ref / cand) : Json(nullptr);
  if (flush && row.contains("reference_warm_ms") && row.contains("candidate_warm_ms")) {
    const double rw = row["reference_warm_ms"].get<double>(), cw = row["candidate_warm_ms"].get<double>();
    row["warm_speedup"] = cw > 0 && std::isfinite(rw / cw) ? Json(rw / cw) : Json(nullptr);
  }
}

std::optional<Json> CaseTimer::ClockedCall(WorkerRole role, Json request, double* clocked) {
  const auto before = std::chrono::steady_clock::now();
  auto reply = Call(role, std::move(request));
  *clocked = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - before).count();
  return reply;
}

bool CaseTimer::RecheckOutput() {
  const TimingSettings& t = req_.options.timing;
  if (req_.turn.share) req_.turn.share();  // the re-check needs no quiet device
  Json& row = result_.row;
  const std::string stem = req_.scratch + "/timed_" + std::to_string(req_.case_index);
  const std::string& cand_dir = session_.CandidateFolder(req_.scratch);
  const std::string cand_out = cand_dir + "/timed_" + std::to_string(req_.case_index) + "_candidate.kvt";
  Json finish{{"op", "time_finish"}};
  const HandoffSpec handoff = NewHandoff(cand_dir, 1);
  if (t.recheck) finish["out"] = stem + "_reference.kvt";
  if (t.recheck && req_.outputs_on_device) finish["handoff"] = handoff.ToJson();
  Json ref_finish_req = finish;
  ref_finish_req["keep"] = true;  // for the next candidate's timing of this case
  auto ref_finish = Call(WorkerRole::kReference, ref_finish_req);
  if (!ref_finish) return false;
  DeviceOffer offer = OfferIn(*ref_finish);  // ended on every way out
  if (t.recheck) finish["out"] = cand_out;
  finish.erase("handoff");
  if (offer.open()) {
    finish["handoff"] = Json{{"socket", handoff.socket}, {"secret", handoff.secret}};
    finish["output_layout"] = offer.layout();
  }
  auto cand_finish = Call(WorkerRole::kCandidate, finish);
  if (!cand_finish) return false;
  row["sensors_after"] = Field(*ref_finish, "sensors");
  if (Field(*cand_finish, "inputs_modified") != Json(false)) {
    Fail(OutcomeStatus::kMismatch, "the candidate modified its inputs while being timed");
    return false;
  }
  if (!t.recheck) {
    row["recheck"] = "skipped";
  } else {
    const OutputFiles files{.reference = stem + "_reference.kvt", .candidate = {cand_out},
                            .remove_reference = true, .device_stem = stem + "_handoff"};
    if (!CompareTimedOutputs(offer, *cand_finish, files, "recheck_on", [this] { GiveBack(); })) return false;
    row["recheck"] = "ok";
  }
  GiveBack();
  return true;
}

}  // namespace

PreparedCase PrepareCase(DeviceSession& session, const TimedCaseRequest& request) {
  return CaseTimer(session, request).Prepare();
}

TimedCase TimeCase(DeviceSession& session, const TimedCaseRequest& request, PreparedCase prepared) {
  return CaseTimer(session, request).Measure(std::move(prepared));
}

}  // namespace kvault
