#include "engine/timed_case.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "check/aliasing.h"
#include "check/tensor_file.h"
#include "engine/cpu_charge.h"
#include "engine/output_check.h"
#include "engine/output_handoff.h"
#include "engine/output_layout.h"
#include "engine/sample_comparisons.h"
#include "engine/timing_statistics.h"
#include "engine/worker_limits.h"
#include "engine/worker_outcome.h"
#include "util/files.h"
#include "util/process_cpu.h"
#include "util/sha256.h"
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
// Timing's device memory (TimingFootprintBytes), both sides, per byte of the case's
// inputs: each side's timed inputs, a sample's fresh inputs (made, then copied into the
// timed buffers), its output and the last one kept (4), and the reference's buffer that
// an output is handed over in (1). The re-check's fresh inputs and output take the
// place of the sample's.
constexpr int64_t kTimingBytesPerInputByte = 9;
// A graph's bounds, as the worker sets them (worker_limits.h).
using worker_limits::kGraphInputBytes;
using worker_limits::kGraphMaxCalls;
using worker_limits::kGraphOutputBytes;
using worker_limits::kGraphPoolSets;
// Added to the spread of the reference's overhead in the engine clock's bound
// (TimingSettings::clock_slack): below timer resolution on any host.
constexpr double kClockFloorMs = 0.02;
// When the samples' clock is blind (their device time is within the allowance, as on
// a busy host), bursts: each side runs about kBurstMs of the reference's device time
// back to back (at most kBurstMaxReplays runs), kBurstPairs times a short and a long
// burst, clocked; the long one's time less the short one's is device time. A
// candidate whose bursts, read as the reference's bursts read against its reports,
// make a report more than kBurstSlack above what it reported gets that report.
constexpr double kBurstMs = 20.0;
constexpr int kBurstMaxReplays = 2000;
constexpr int kBurstPairs = 3;
constexpr double kBurstSlack = 0.5;

// Samples per side and round: a batch of cold ones (with the flush) and one of warm.
int RoundSamples(const TimingSettings& t) { return (t.flush ? 2 : 1) * std::max(1, t.batch); }

// The inputs of sample `index` of a round: a seed both sides are given only with the
// sample's own request, derived by SHA-256 from the round's secret nonce. Seeds a
// candidate has seen say nothing of the next one: with consecutive seeds a candidate
// computed the next sample's output during the unclocked flush before it.
int64_t SampleSeed(uint64_t nonce, int index) {
  KeyHasher h;
  h.AddInt("nonce", static_cast<int64_t>(nonce));
  h.AddInt("sample", index);
  return static_cast<int64_t>(std::stoull(h.Hex().substr(0, 16), nullptr, 16) & ((uint64_t{1} << 62) - 1));
}

// A round's nonce: 64 bits from the operating system's random source, not from a
// generator whose state a candidate could learn from the seeds it sees.
uint64_t SecretNonce() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
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

// ref / cand, unset where that is not a finite number.
std::optional<double> Ratio(double ref, double cand) {
  if (cand > 0 && std::isfinite(ref / cand)) return ref / cand;
  return std::nullopt;
}

// A number a worker sent, else unset.
std::optional<double> OptionalNumber(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// The primary series' summary (cold samples with the flush, else warm), the spread of
// each and the samples' wall time, into `side` (docs/timing.md); returns the primary
// median (0 when it is empty).
double Describe(TimedSide& side, const Series& s, bool flush) {
  const std::vector<double>& primary = flush ? s.cold : s.warm;
  double median = 0;
  if (!primary.empty()) {
    SeriesSummary m = Summarize(primary);
    median = m.median_ms;
    side.primary = TimedSide::Summary{m.median_ms, m.iqr_ms, m.samples, m.noise};
  }
  for (auto [spread, v] : {std::pair{&side.cold, &s.cold}, {&side.warm, &s.warm}})
    if (!v->empty()) *spread = TimedSide::Spread{Median(*v), InterquartileRange(*v)};
  if (!s.wall.empty()) side.wall_ms = Median(s.wall);
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
  // Per sample, the CPU time its side's other threads used from before its flush to its
  // reply, read by the engine (engine/cpu_charge.h); the reference's also inside its call.
  std::vector<double> others, call_others;
  bool cpu_read = false;  // some process of the side was read (not a worker without a pid)
};

// One candidate's side of a turn: its member (session, request, record) and its samples.
struct CandidateSide {
  TurnMember* member = nullptr;
  Json warm = Json::object();
  SideSamples samples;
  bool clock_blind = false;            // BoundByEngineClock could not have seen a 2x forgery
  int compared = 0;                    // sample outputs compared
  // The current round's sample output files: the SHA-256 its worker said each holds.
  std::vector<std::string> written;
  std::unique_ptr<FrozenTree> frozen;  // its processes, stopped while another side is timed
  bool active() const { return !member->timed.failure; }
  DeviceSession& session() const { return *member->session; }
  const TimedCaseRequest& request() const { return *member->request; }
  TimingRecord& record() const { return member->timed.record; }
};

// Side 0 of a turn is the reference (the leader's session's worker), side k >= 1 the
// k-th member's candidate.
class CaseTimer {
 public:
  CaseTimer(TurnMember& leader, std::vector<TurnMember*> members)
      : leader_(leader), session_(*leader.session), req_(*leader.request), timeout_(req_.options.timeouts.time),
        where_("timing case " + req_.task.cases[req_.case_index].name), rng_(std::random_device{}()) {
    for (TurnMember* m : members) AddSide(m);
  }

  PreparedCase Prepare();  // the leader alone, on its own session
  // The exclusive part (TimeTurn); `gather` the other members once the turn is had.
  void Measure(const std::function<std::vector<TurnMember*>()>& gather);
  void Recheck();  // the leader alone, on its own session (RecheckCase)

 private:
  // Measure's steps, in order (docs/timing.md, "For each performance case"). Each
  // returns false once the turn is over for every member (the reference failed or no
  // candidate is left); a candidate that fails leaves the turn, the others go on.
  bool TakeTurn(const std::function<std::vector<TurnMember*>()>& gather);  // the device's lock; the members
  bool WarmUp();          // every side warms up (the others' processes stopped)
  bool ChooseMethod();    // events or the clock, or a graph of the same calls on every side
  bool SampleRounds();    // rounds of samples until the stopping rule; every round's outputs checked
  void BoundByEngineClock(CandidateSide& c);  // the candidate's samples are at least what the engine clocked
  void BoundByCpu(CandidateSide& c);          // ... and at least what its other threads ran (cpu_charge.h)
  bool BoundByBursts();   // where that clock is blind, long bursts of the sides clocked
  void Summarize();       // medians, spreads and the speedup into each record
  bool RecheckOutput(CandidateSide& c);  // one more call on the next seed's inputs, compared

  void AddSide(TurnMember* m) {
    sides_.emplace_back();
    sides_.back().member = m;
  }
  bool AnyActive() const {
    return std::any_of(sides_.begin(), sides_.end(), [](const CandidateSide& c) { return c.active(); });
  }
  int ActiveCount() const {
    return static_cast<int>(std::count_if(sides_.begin(), sides_.end(), [](const CandidateSide& c) { return c.active(); }));
  }
  // Every member's candidate stopped but `running`'s (nullptr: the reference runs), so
  // that nothing of another candidate takes the device or the CPU from the side timed.
  void StopAllBut(const CandidateSide* running);
  void ContinueAll() {
    for (CandidateSide& c : sides_) c.frozen.reset();
  }
  // What every member's record gets: set(record) for each.
  template <class Set>
  void ForAll(Set set) {
    for (CandidateSide& c : sides_) set(c.record());
  }
  SideSamples& Samples(int side) { return side == 0 ? reference_samples_ : sides_[side - 1].samples; }
  int SideOf(const CandidateSide& c) const { return static_cast<int>(&c - sides_.data()) + 1; }

  // One side's samples of one round; false when it failed (its failure is set).
  bool SampleSide(int side, int round, uint64_t nonce);
  // The round's outputs of `c` that alias an input where the reference's do not.
  bool CheckAliasing(CandidateSide& c, int round);
  // How the round's sample outputs reach the comparison: kept on the device by every
  // side, written to files, or (too large to keep) not at all; the record's samples_on.
  void ChooseSampleOutputs();
  // Outputs in files (docs/timing.md, "Outputs compared behind the rounds"): what the
  // candidate's worker says it wrote for sample `index` (`out_sha256`), kept to check the
  // file against.
  bool NoteWritten(CandidateSide& c, int index, const Json& reply);
  // The round's outputs queued for comparison with the reference's files (all, or
  // kComparedPerRound drawn when they are large); the files not queued removed.
  void QueueRoundComparisons(int round);
  // The comparisons finished (all of them with `wait`): a candidate whose output differs
  // fails, naming its first differing sample.
  void ApplyComparisons(bool wait);
  // Outputs kept on the device: the round's of every candidate (all, or
  // kComparedPerRound drawn at random when they are large) handed over and compared.
  bool CompareKeptRound(int round);
  // The samples of a round compared: all when one output is at most kCompareAllBytes,
  // else kComparedPerRound drawn after the round.
  std::vector<int> ComparedSamples(uintmax_t output_bytes);
  // Sample `index` of the round: the outputs both sides kept handed over (on the device
  // when the reference offers and the candidate delivers, else files) and compared.
  bool CompareKeptSample(CandidateSide& c, int round, int index);
  std::string SamplePath(int side, int round, int index) const;
  int SamplesPerRound() const;
  void RemoveSampleFiles(int round);
  // The offer a reference reply makes (its `handoff`), or none.
  DeviceOffer OfferIn(const Json& reference_reply);
  // A call of the reference's worker; on failure every member fails (nullopt).
  std::optional<Json> AskReference(Json request);
  // A call of a candidate's worker; on failure that candidate fails (nullopt).
  std::optional<Json> AskCandidate(CandidateSide& c, Json request);
  std::optional<Json> Ask(int side, Json request) {
    return side == 0 ? AskReference(std::move(request)) : AskCandidate(sides_[side - 1], std::move(request));
  }
  // A call on one side timed by the engine's clock (ms into *clocked).
  std::optional<Json> ClockedCall(int side, Json request, double* clocked);
  // The device time per call of `side`'s bursts of `replays` runs on the engine's
  // clock (median over kBurstPairs); false when a burst failed.
  bool BurstPerCall(int side, int replays, double* per_call_ms);
  Verification Failure(OutcomeStatus status, const std::string& message) const {
    Verification v;
    v.status = status;
    v.compiled = true;
    v.message = where_ + ": " + message;
    return v;
  }
  void FailCandidate(CandidateSide& c, OutcomeStatus status, const std::string& message) {
    c.member->timed.failure = Failure(status, message);
  }
  // Every member still in the turn fails alike (the reference's or the device's fault).
  void FailAll(OutcomeStatus status, const std::string& message) {
    turn_over_ = true;
    for (CandidateSide& c : sides_)
      if (c.active()) FailCandidate(c, status, message);
  }
  // A failure of the reference worker, judged by worker_outcome.h's one rule.
  void FailAll(const TrustedFailure& failure) { FailAll(failure.status, failure.message); }
  // Side `side` sent a reply it should not have: a candidate's is a crash, the
  // reference's a broken protocol (TrustedReplyUnusable).
  void FailSide(int side, const std::string& message) {
    if (side == 0)
      FailAll(TrustedReplyUnusable("the reference", message));
    else
      FailCandidate(sides_[side - 1], OutcomeStatus::kCrash, message);
  }
  // The candidate's outputs of timed calls against the reference's (output_check.h);
  // false with the candidate's failure set when they differ or cannot be compared.
  // `where` is the record's field that says where they were compared (recheck_on).
  // One comparison of a timed call's output, noted in the record; false with the candidate's
  // mismatch set when it differs.
  bool JudgeTimedOutput(CandidateSide& c, const CompareReport& cmp);
  // Where a timed sample's failure happened, for its message.
  std::string SampleWhere(int round, int index) const;
  bool CompareTimedOutputs(CandidateSide& c, DeviceOffer& offer, const Json& candidate_reply,
                           const OutputFiles& files, std::string TimingRecord::*where,
                           const std::function<void()>& device_done = {});
  void StepDone(std::optional<double> TimingSteps::*step);

  TurnMember& leader_;
  DeviceSession& session_;  // the reference's
  const TimedCaseRequest& req_;
  std::chrono::milliseconds timeout_;
  std::string where_;
  std::mt19937_64 rng_;  // seeds of samples and which outputs are compared: never sent ahead
  std::vector<CandidateSide> sides_;  // the members' candidates, the leader's first
  std::unique_ptr<SampleComparisons> comparisons_;  // outputs in files, behind the rounds
  std::vector<uint64_t> nonces_;                    // per round sampled
  Json reference_warm_ = Json::object();
  SideSamples reference_samples_;
  std::string method_;
  int graph_calls_ = 1;  // calls per graph sample, the same on every side
  enum class SampleOutputs { kFiles, kKept, kUnchecked } sample_outputs_ = SampleOutputs::kFiles;
  uintmax_t output_bytes_ = 0;  // of one output of the reference (its layout), when kept
  bool holding_ = false;  // the turn's device hold, until `share`
  bool turn_over_ = false;  // every member failed at once (FailAll)
  int warmup_ms_ = 0;
  TimingSteps steps_;
  std::chrono::steady_clock::time_point step_began_ = std::chrono::steady_clock::now();
};

void CaseTimer::StopAllBut(const CandidateSide* running) {
  for (CandidateSide& c : sides_) {
    if (&c == running)
      c.frozen.reset();
    else if (!c.frozen)
      c.frozen = c.session().FreezeCandidate();
  }
}

std::optional<Json> CaseTimer::AskReference(Json request) {
  auto reply = session_.AskReference(request, timeout_, "the reference");
  if (reply) return std::move(*reply);
  FailAll(reply.failure());
  return std::nullopt;
}

std::optional<Json> CaseTimer::AskCandidate(CandidateSide& c, Json request) {
  auto w = c.session().Get(WorkerRole::kCandidate);
  if (!w) {
    FailCandidate(c, OutcomeStatus::kInfraError, w.error());
    return std::nullopt;
  }
  WorkerReply r = (*w)->Call(std::move(request), timeout_);
  if (ReplyOk(r)) return r.response;
  c.member->timed.failure = CandidateFailure(r, where_, timeout_, (*w)->TakeLog());
  return std::nullopt;
}

bool CaseTimer::CompareTimedOutputs(CandidateSide& c, DeviceOffer& offer, const Json& candidate_reply,
                                    const OutputFiles& files, std::string TimingRecord::*where,
                                    const std::function<void()>& device_done) {
  ComparedOutputs got = CompareOutputs(offer, candidate_reply, files, req_.tolerance, device_done);
  if (got.failure) {
    FailCandidate(c, got.failure->status, got.failure->message);
    return false;
  }
  c.record().*where = got.on_device ? "device" : "files";
  for (const CompareReport& cmp : got.calls)
    if (!JudgeTimedOutput(c, cmp)) return false;
  return true;
}

bool CaseTimer::JudgeTimedOutput(CandidateSide& c, const CompareReport& cmp) {
  TimingRecord& r = c.record();
  r.recheck_max_abs_error = std::max(cmp.max_abs_error, r.recheck_max_abs_error.value_or(0.0));
  if (cmp.match) return true;
  r.recheck = "mismatch";
  FailCandidate(c, OutcomeStatus::kMismatch, "the output of a timed call differs from the reference: " + cmp.message);
  return false;
}

std::string CaseTimer::SampleWhere(int round, int index) const {
  return " (timed sample " + std::to_string(index) + " of round " + std::to_string(round) + ", inputs of seed " +
         std::to_string(SampleSeed(nonces_[round], index)) + ")";
}

PreparedCase CaseTimer::Prepare() {
  const auto began = std::chrono::steady_clock::now();
  CandidateSide& c = sides_[0];
  PreparedCase prepared;
  const TimeStartRequest ref_start_req = ReferenceSideStart(req_);
  auto fail = [&] {
    prepared.failure = std::move(c.member->timed.failure);
    c.member->timed.failure.reset();
    return std::move(prepared);
  };
  auto ref_start = AskReference(ref_start_req.ToJson());
  if (!ref_start) return fail();
  TimeStartRequest cand_start_req = ref_start_req;
  cand_start_req.side = protocol::kSideCandidate;
  cand_start_req.task.clear();
  if (const Json layout = Field(*ref_start, protocol::field::kOutputLayout); layout.is_object())
    cand_start_req.output_layout = layout;
  auto cand_start = AskCandidate(c, cand_start_req.ToJson());
  if (!cand_start) return fail();
  // The candidate's worker can forge its digest (engine/output_check.h).
  auto make_again = [&]() -> Result<std::string, TrustedFailure> {
    TimeStartRequest again = ref_start_req;
    again.fresh = true;  // not a side kept from an earlier timing
    auto reply = session_.AskReference(again.ToJson(), timeout_, "the reference");
    if (!reply) return reply.failure();
    return ReplyString(*reply, protocol::field::kInputDigest, "");
  };
  if (auto fault = InputDigestVerdict(ReplyString(*ref_start, protocol::field::kInputDigest, ""),
                                      ReplyString(*cand_start, protocol::field::kInputDigest, ""), make_again)) {
    FailCandidate(c, fault->status, "timing inputs: " + fault->message);
    return fail();
  }
  prepared.reference = std::move(*ref_start);
  prepared.candidate = std::move(*cand_start);
  prepared.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
  return prepared;
}

void CaseTimer::Measure(const std::function<std::vector<TurnMember*>()>& gather) {
  step_began_ = std::chrono::steady_clock::now();
  if (TakeTurn(gather)) {
    StepDone(&TimingSteps::drain);  // the device's lock and other lanes' runs in flight ending
    if (WarmUp()) {
      StepDone(&TimingSteps::start);
      if (ChooseMethod() && SampleRounds()) {
        for (CandidateSide& c : sides_)
          if (c.active()) BoundByEngineClock(c), BoundByCpu(c);
        if (BoundByBursts()) {
          Summarize();
          StepDone(&TimingSteps::sampling);
        }
      }
    }
  }
  ContinueAll();
  // The re-checks need no quiet device: the next lane's turn may begin.
  if (holding_ && req_.turn.share) req_.turn.share();
  holding_ = false;
  if (comparisons_) {  // what the rounds left to compare, beside the next turn
    step_began_ = std::chrono::steady_clock::now();
    ApplyComparisons(/*wait=*/true);
    StepDone(&TimingSteps::compare);
    for (CandidateSide& c : sides_) c.record().samples_compared = c.compared;
    comparisons_.reset();
  }
  for (int round = 0; round < static_cast<int>(nonces_.size()); ++round) RemoveSampleFiles(round);
  for (CandidateSide& c : sides_) {
    c.record().stage_ms = steps_;
    c.record().stage_ms.prepare = c.member->prepared.ms;
  }
}

void CaseTimer::StepDone(std::optional<double> TimingSteps::*step) {
  const auto now = std::chrono::steady_clock::now();
  steps_.*step = std::chrono::duration<double, std::milli>(now - step_began_).count();
  step_began_ = now;
}

bool CaseTimer::TakeTurn(const std::function<std::vector<TurnMember*>()>& gather) {
  warmup_ms_ = req_.warmup_ms >= 0 ? req_.warmup_ms : req_.options.timing.warmup_ms;
  bool quiet = true;
  if (req_.turn.alone) {
    auto turn = req_.turn.alone();
    if (!turn) {
      FailAll(OutcomeStatus::kInfraError, turn.error());
      return false;
    }
    quiet = turn->device_quiet;
    if (req_.warmup_ms < 0 && turn->warmup_ms >= 0) warmup_ms_ = turn->warmup_ms;
  }
  holding_ = true;
  if (gather)
    for (TurnMember* m : gather()) AddSide(m);
  ForAll([&](TimingRecord& r) {
    r.case_name = req_.task.cases[req_.case_index].name;
    r.device_quiet = quiet;
    r.turn_candidates = static_cast<int64_t>(sides_.size());  // > 1: a group turn
  });
  return true;
}

bool CaseTimer::WarmUp() {
  const Json warmup = TimeWarmupRequest{warmup_ms_}.ToJson();
  StopAllBut(nullptr);
  auto ref = AskReference(warmup);
  if (!ref) return false;
  reference_warm_ = std::move(*ref);
  for (CandidateSide& c : sides_) {
    StopAllBut(&c);
    if (auto cand = AskCandidate(c, warmup)) c.warm = std::move(*cand);
  }
  ContinueAll();
  const Json& prepared = leader_.prepared.reference;
  const std::optional<double> flush_bytes = OptionalNumber(prepared, protocol::field::kFlushBytes);
  ForAll([&](TimingRecord& r) {
    r.warmup_ms = warmup_ms_;
    if (flush_bytes) r.flush_bytes = static_cast<int64_t>(*flush_bytes);
    r.reference_kept = Field(prepared, protocol::field::kKept) == Json(true);
    r.reference.call_ms = OptionalNumber(reference_warm_, protocol::field::kCallMs);
    r.reference.device_call_ms = OptionalNumber(reference_warm_, protocol::field::kDeviceCallMs);
    r.sensors_before = Field(reference_warm_, protocol::field::kSensors);
  });
  for (CandidateSide& c : sides_) {
    c.record().candidate.call_ms = OptionalNumber(c.warm, protocol::field::kCallMs);
    c.record().candidate.device_call_ms = OptionalNumber(c.warm, protocol::field::kDeviceCallMs);
  }
  return AnyActive();
}

bool CaseTimer::ChooseMethod() {
  const TimingSettings& t = req_.options.timing;
  const bool gpu = req_.options.backend != Backend::kCpu;
  method_ = gpu ? kEvents : kClock;
  // By device time per call (the warm-up's burst; call_ms, which carries a host round
  // trip per call, from workers that send none).
  auto device_ms = [](const Json& warm) { return Number(warm, "device_call_ms", Number(warm, "call_ms", 1e9)); };
  double fastest = device_ms(reference_warm_);
  for (const CandidateSide& c : sides_)
    if (c.active()) fastest = std::min(fastest, device_ms(c.warm));
  if (!gpu || !(t.graph == GraphMode::kAlways || (t.graph == GraphMode::kAuto && fastest < t.graph_below_ms)))
    return true;
  // The reference sizes its graph on the quiet device (trusted); each candidate
  // captures as many calls, so that a sample's time per call is the engine's division
  // of one replay by a number it chose, never the candidate's claim. A candidate that
  // can hold fewer (its outputs' memory) sets the number for every side.
  StopAllBut(nullptr);
  auto ref = AskReference(TimeGraphRequest{}.ToJson());
  if (!ref) return false;
  auto fallback = [&](const Json& why) {
    const std::string because = why.is_string() ? why.get<std::string>() : "capture failed";
    ForAll([&](TimingRecord& r) { r.graph_fallback = because; });
    ContinueAll();
    return AnyActive();  // every side uses events
  };
  if (const Json why = Field(*ref, protocol::field::kGraphFailed); !why.is_null()) return fallback(why);
  const int ref_calls = static_cast<int>(Number(*ref, "graph_calls", 0));
  if (ref_calls < 1) {
    FailAll(TrustedReplyUnusable("the reference", "a graph of no calls captured"));
    return false;
  }
  // Each candidate captures `calls`; one that held fewer sets a smaller number, and
  // every side captures again until all hold the same.
  int calls = ref_calls;
  std::vector<int> held(sides_.size(), 0);
  for (int pass = 0; pass <= static_cast<int>(sides_.size()); ++pass) {
    bool same = true;
    for (size_t k = 0; k < sides_.size(); ++k) {
      CandidateSide& c = sides_[k];
      if (!c.active() || held[k] == calls) continue;
      StopAllBut(&c);
      auto cand = AskCandidate(c, TimeGraphRequest{calls}.ToJson());
      if (!cand) continue;
      if (const Json why = Field(*cand, protocol::field::kGraphFailed); !why.is_null()) return fallback(why);
      const int got = static_cast<int>(Number(*cand, "graph_calls", 0));
      if (got < 1 || got > calls) {
        FailCandidate(c, OutcomeStatus::kCrash, "the candidate's worker reported a graph of " + std::to_string(got) +
                                                    " calls for " + std::to_string(calls) + " asked (a forged reply)");
        continue;
      }
      held[k] = got;
      if (got < calls) calls = got, same = false;
    }
    if (same) break;
  }
  if (!AnyActive()) return false;
  if (calls < ref_calls) {
    StopAllBut(nullptr);
    auto again = AskReference(TimeGraphRequest{calls}.ToJson());
    if (!again) return false;
    if (const Json why = Field(*again, protocol::field::kGraphFailed); !why.is_null()) return fallback(why);
    if (static_cast<int>(Number(*again, "graph_calls", 0)) != calls) {
      FailAll(TrustedReplyUnusable("the reference", "a graph of another size than asked captured"));
      return false;
    }
  }
  ContinueAll();
  graph_calls_ = calls;
  method_ = kGraph;
  ForAll([&](TimingRecord& r) { r.graph_calls = graph_calls_; });
  return true;
}

int CaseTimer::SamplesPerRound() const { return RoundSamples(req_.options.timing); }

std::string CaseTimer::SamplePath(int side, int round, int index) const {
  const std::string& dir = side == 0 ? req_.scratch
                                     : sides_[side - 1].session().CandidateFolder(sides_[side - 1].request().scratch);
  return dir + "/timed_" + std::to_string(req_.case_index) + "_r" + std::to_string(round) + "_" +
         std::to_string(index) + "_" + (side == 0 ? "reference" : "candidate") + ".kvt";
}

bool CaseTimer::SampleRounds() {
  const TimingSettings& t = req_.options.timing;
  ChooseSampleOutputs();
  if (sample_outputs_ == SampleOutputs::kFiles)
    comparisons_ = std::make_unique<SampleComparisons>(req_.tolerance, SampleComparisons::ThreadsFor(req_.options.backend));
  const StoppingRule rule = StoppingRule::From(t);
  const auto began = std::chrono::steady_clock::now();
  const int sides = 1 + static_cast<int>(sides_.size());
  const int n = SamplesPerRound();
  int rounds = 0;
  double compare_ms = 0;  // of the rounds' time, comparing their samples' outputs
  StopReason stop = StopReason::kContinue;
  while (stop == StopReason::kContinue) {
    const uint64_t nonce = SecretNonce();
    nonces_.push_back(nonce);
    for (CandidateSide& c : sides_) c.written.assign(n, std::string());
    for (int k = 0; k < sides; ++k) {
      const int side = (rounds + k) % sides;  // who goes first turns round by round
      if (side > 0 && !sides_[side - 1].active()) continue;
      if (!SampleSide(side, rounds, nonce) && side == 0) return false;
    }
    ContinueAll();
    for (CandidateSide& c : sides_)
      if (c.active()) CheckAliasing(c, rounds);
    if (!AnyActive()) return false;
    const auto compare_began = std::chrono::steady_clock::now();
    if (sample_outputs_ == SampleOutputs::kKept && !CompareKeptRound(rounds)) return false;
    if (comparisons_) {
      QueueRoundComparisons(rounds);
      // On the CPU the comparison would take the cores the samples are timed on: each
      // round's is done before the next round. On a GPU it runs beside the samples.
      ApplyComparisons(/*wait=*/req_.options.backend == Backend::kCpu);
      if (!AnyActive()) return false;
    }
    compare_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - compare_began).count();
    ++rounds;
    // The wall cap is per pair of sides: a turn of n candidates may sample (n + 1) / 2
    // times as long as one of a single candidate.
    const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count() *
                           2.0 / (1 + ActiveCount());
    std::vector<const std::vector<double>*> series{t.flush ? &reference_samples_.series.cold
                                                           : &reference_samples_.series.warm};
    for (const CandidateSide& c : sides_)
      if (c.active()) series.push_back(t.flush ? &c.samples.series.cold : &c.samples.series.warm);
    stop = rule.Decide(series, elapsed);
  }
  ForAll([&](TimingRecord& r) {
    r.method = method_;
    r.rounds = rounds;
    r.stop = std::string(ToString(stop));
  });
  for (CandidateSide& c : sides_) c.record().samples_compared = c.compared;
  steps_.sampling_compare = compare_ms;  // within the turn; the rest in "compare"
  return true;
}

bool CaseTimer::SampleSide(int side, int round, uint64_t nonce) {
  const TimingSettings& t = req_.options.timing;
  const int n = SamplesPerRound();
  const int cold = t.flush ? std::max(1, t.batch) : 0;
  // Nothing of another side runs while this one is timed: not a process a candidate
  // left behind, not a thread of its worker.
  StopAllBut(side == 0 ? nullptr : &sides_[side - 1]);
  SideSamples& got = Samples(side);
  got.aliases.clear();
  std::mt19937_64 calls(nonce ^ 0x9e3779b97f4a7c15ULL);  // the graph call whose output is kept
  const char* who = side == 0 ? "reference" : "candidate";
  // The side's processes, read from outside before the flush and after the reply.
  auto processes = [&] {
    return side == 0 ? session_.ReferenceProcesses() : sides_[side - 1].session().CandidateProcesses();
  };
  for (int i = 0; i < n; ++i) {
    const bool flushed = i < cold;
    const ProcessCpu cpu_before = ReadProcessCpu(processes());
    if (flushed && !Ask(side, TimeFlushRequest{}.ToJson())) return false;
    TimeSampleRequest request{method_, SampleSeed(nonce, i)};
    if (method_ == kGraph) request.call = static_cast<int64_t>(calls() % static_cast<uint64_t>(graph_calls_));
    if (sample_outputs_ == SampleOutputs::kFiles) request.out = SamplePath(side, round, i);
    if (sample_outputs_ == SampleOutputs::kKept) request.keep_as = i;
    double clocked = 0;
    auto reply = ClockedCall(side, request.ToJson(), &clocked);
    if (!reply) return false;
    const ProcessCpu cpu_after = ReadProcessCpu(processes());
    got.cpu_read = got.cpu_read || !cpu_after.processes_ns.empty();
    got.others.push_back(OtherThreadsMs(cpu_before, cpu_after));
    got.call_others.push_back(std::max(0.0, Number(*reply, protocol::field::kCallOthersMs, 0)));
    if (side > 0 && sample_outputs_ == SampleOutputs::kFiles && !NoteWritten(sides_[side - 1], i, *reply))
      return false;
    const Json ms = Field(*reply, protocol::field::kMs);
    if (!ms.is_number() || !std::isfinite(ms.get<double>()) || ms.get<double>() < 0) {
      FailSide(side, std::string("the ") + who + "'s worker sent no time for a sample");
      return false;
    }
    if (method_ == kGraph && Number(*reply, "graph_calls", -1) != graph_calls_) {
      FailSide(side, std::string("the ") + who + "'s worker replayed a graph of another size (a forged reply)");
      return false;
    }
    if (side > 0 && Field(*reply, protocol::field::kInputsModified) != Json(false)) {
      FailCandidate(sides_[side - 1], OutcomeStatus::kMismatch, "the candidate modified its inputs while being timed");
      return false;
    }
    const double per_call = ms.get<double>();
    (flushed ? got.series.cold : got.series.warm).push_back(per_call);
    if (const Json wall = Field(*reply, protocol::field::kWallMs); wall.is_number()) got.series.wall.push_back(wall.get<double>());
    got.aliases.push_back(Field(*reply, protocol::field::kOutputAliases));
    got.reported.push_back(per_call * graph_calls_);
    got.clocked.push_back(clocked);
    got.cold.push_back(flushed);
  }
  return true;
}

bool CaseTimer::CheckAliasing(CandidateSide& c, int round) {
  // A timed call that hands back a view of its input does no work, and its values may
  // be right (check/aliasing.h): allowed only where the reference's output of the same
  // sample aliases an input too.
  const auto& ref = reference_samples_.aliases;
  const auto& cand = c.samples.aliases;
  auto reply_of = [](const Json& aliases) {
    Json reply = Json::object();
    if (!aliases.is_null()) reply["output_aliases"] = aliases;
    return reply;
  };
  for (size_t i = 0; i < cand.size() && i < ref.size(); ++i) {
    auto theirs = OutputAliases(reply_of(cand[i]));
    if (!theirs) {
      FailCandidate(c, OutcomeStatus::kCrash, "the candidate's worker sent a malformed output_aliases: " + theirs.error());
      return false;
    }
    if (theirs->empty()) continue;
    auto ours = OutputAliases(reply_of(ref[i]));
    if (!ours) {
      FailAll(TrustedReplyUnusable("the reference", "a malformed output_aliases: " + ours.error()));
      return false;
    }
    if (std::string why = ForbiddenAliasing(*theirs, *ours); !why.empty()) {
      FailCandidate(c, OutcomeStatus::kMismatch, "a timed call's " + why + " (timed sample " + std::to_string(i) +
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
    // longer than the samples. Every side keeps each sample's output there until the
    // engine has drawn the ones it compares, as long as a round's fit.
    const auto bytes = OutputLayoutBytes(Field(leader_.prepared.reference, protocol::field::kOutputLayout));
    output_bytes_ = bytes.value_or(0);
    sample_outputs_ = bytes && *bytes * static_cast<uintmax_t>(SamplesPerRound()) <= kKeptSampleBytes
                          ? SampleOutputs::kKept
                          : SampleOutputs::kUnchecked;
  }
  static constexpr const char* kNames[] = {"files", "device", "unchecked"};
  ForAll([&](TimingRecord& r) { r.samples_on = kNames[static_cast<int>(sample_outputs_)]; });
}

std::vector<int> CaseTimer::ComparedSamples(uintmax_t output_bytes) {
  std::vector<int> chosen(SamplesPerRound());
  for (int i = 0; i < static_cast<int>(chosen.size()); ++i) chosen[i] = i;
  if (output_bytes > kCompareAllBytes) {  // large outputs: some, at random, after the fact
    std::shuffle(chosen.begin(), chosen.end(), rng_);
    chosen.resize(std::min<size_t>(chosen.size(), kComparedPerRound));
    std::sort(chosen.begin(), chosen.end());
  }
  return chosen;
}

bool CaseTimer::CompareKeptRound(int round) {
  const std::vector<int> chosen = ComparedSamples(output_bytes_);
  for (CandidateSide& c : sides_) {
    if (!c.active()) continue;
    for (int i : chosen) {
      const bool same = CompareKeptSample(c, round, i);
      if (turn_over_) return false;  // the reference failed
      if (!same) {
        if (c.member->timed.failure) c.member->timed.failure->message += SampleWhere(round, i);
        break;
      }
      ++c.compared;
    }
  }
  RemoveSampleFiles(round);
  return AnyActive();
}

bool CaseTimer::NoteWritten(CandidateSide& c, int index, const Json& reply) {
  const Json sha256 = Field(reply, "out_sha256");
  if (!sha256.is_string() || sha256.get<std::string>().size() != 64) {
    FailCandidate(c, OutcomeStatus::kCrash,
                  "the candidate's worker sent no digest of a timed sample's output (a forged reply)");
    return false;
  }
  c.written[index] = sha256.get<std::string>();
  return true;
}

void CaseTimer::QueueRoundComparisons(int round) {
  std::error_code size_error;
  const uintmax_t bytes = std::filesystem::file_size(SamplePath(0, round, 0), size_error);
  std::vector<int> chosen = ComparedSamples(size_error ? kCompareAllBytes + 1 : bytes);
  for (int i : chosen) {
    std::shared_ptr<const TensorFile> reference;  // mapped once for every member
    uintmax_t reference_bytes = 0;
    std::string unreadable;
    for (CandidateSide& c : sides_) {
      if (!c.active() || c.written[i].empty()) continue;
      if (!reference && unreadable.empty()) {
        auto opened = TensorFile::Open(SamplePath(0, round, i));
        if (opened) {
          reference = std::make_shared<const TensorFile>(std::move(*opened));
          reference_bytes = std::filesystem::file_size(SamplePath(0, round, i), size_error);
        } else {
          unreadable = opened.error();
        }
      }
      if (!reference) {
        FailCandidate(c, OutcomeStatus::kInfraError, "reference output unreadable: " + unreadable);
        continue;
      }
      const std::string path = SamplePath(SideOf(c), round, i);
      comparisons_->Add({.side = SideOf(c), .round = round, .index = i, .reference = reference, .candidate = path,
                         .most_bytes = CandidateOutputLimit(reference_bytes),
                         .sha256 = std::move(c.written[i])});
      c.written[i].clear();  // queued: its job reads and removes the file
    }
  }
  // What is not queued goes now; the reference's files stay mapped by the jobs.
  std::error_code ignored;
  for (int i = 0; i < SamplesPerRound(); ++i) {
    std::filesystem::remove(SamplePath(0, round, i), ignored);
    for (CandidateSide& c : sides_)
      if (!c.written[i].empty() || !c.active()) std::filesystem::remove(SamplePath(SideOf(c), round, i), ignored);
  }
}

void CaseTimer::ApplyComparisons(bool wait) {
  for (SampleComparisons::Done& done : comparisons_->Collect(wait)) {
    CandidateSide& c = sides_[done.side - 1];
    if (!c.active()) continue;  // failed already: its first failure stands
    const std::string where = SampleWhere(done.round, done.index);
    if (done.altered) {
      // Its worker wrote other bytes: a process of the candidate changed the file after.
      FailCandidate(c, OutcomeStatus::kMismatch,
                    "the output file of a timed call was changed after its worker wrote it" + where);
      continue;
    }
    if (!done.report) {
      FailCandidate(c, OutcomeStatus::kCrash, "candidate output unreadable: " + done.report.error() + where);
      continue;
    }
    if (!JudgeTimedOutput(c, *done.report)) {
      c.member->timed.failure->message += where;
      continue;
    }
    ++c.compared;
  }
}

void CaseTimer::RemoveSampleFiles(int round) {
  std::error_code ignored;
  for (int i = 0; i < SamplesPerRound(); ++i)
    for (int side = 0; side <= static_cast<int>(sides_.size()); ++side)
      std::filesystem::remove(SamplePath(side, round, i), ignored);
}

DeviceOffer CaseTimer::OfferIn(const Json& reference_reply) {
  const Json h = Field(reference_reply, protocol::field::kHandoff);
  if (!h.is_object()) return DeviceOffer();
  return DeviceOffer([this](const Json& request) { return session_.AskReference(request, timeout_, "the reference"); },
                     h.value(protocol::field::kOutputLayout, Json()));
}

bool CaseTimer::CompareKeptSample(CandidateSide& c, int round, int index) {
  const int side = SideOf(c);
  const HandoffSpec handoff = NewHandoff(c.session().CandidateFolder(c.request().scratch), 1);
  const std::string ref_out = SamplePath(0, round, index), cand_out = SamplePath(side, round, index);
  // The reference keeps its output for the next candidate of the turn (the round's
  // next sample replaces it).
  TimeOutputRequest to_reference{index, ref_out, handoff.ToJson()};
  to_reference.keep = sides_.size() > 1;
  auto ref = AskReference(to_reference.ToJson());
  if (!ref) return false;
  DeviceOffer offer = OfferIn(*ref);  // ended on every way out
  TimeOutputRequest to_candidate{index, cand_out};
  if (offer.open()) to_candidate.handoff = handoff.Delivery(), to_candidate.output_layout = offer.layout();
  auto cand = AskCandidate(c, to_candidate.ToJson());
  if (!cand) return false;
  const OutputFiles files{.reference = ref_out, .candidate = {cand_out}, .remove_reference = true,
                          .device_stem = c.request().scratch + "/timed_" + std::to_string(req_.case_index) + "_r" +
                                         std::to_string(round) + "_" + std::to_string(index) + "_handoff"};
  return CompareTimedOutputs(c, offer, *cand, files, &TimingRecord::samples_on);
}

void CaseTimer::BoundByEngineClock(CandidateSide& c) {
  // The worker's clock runs in the candidate's process; the engine's does not. A sample
  // request does the same work on every side besides the timed call (fresh inputs, the
  // output written), so the reference's requests say how long that takes; what the
  // candidate's requests took beyond it is time its calls took, whatever its worker
  // reported (docs/timing.md, "What the engine trusts").
  SideSamples& ref = reference_samples_;
  SideSamples& cand = c.samples;
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
  std::vector<double> each;  // per sample, to the microsecond: what the allowance comes from
  for (double o : overhead) each.push_back(std::round(o * 1000) / 1000);
  // Blind: a candidate whose requests took twice what it reported would still be
  // within the allowance (a sample's device time is small beside the host's noise).
  c.clock_blind = !applied && reported <= (spread + kClockFloorMs) / graph_calls_;
  c.record().engine_clock = EngineClockCheck{.reference_overhead_ms = typical,
                                             .reference_overheads_ms = std::move(each),
                                             .allowance_ms = spread,
                                             .candidate_reported_ms = reported,
                                             .candidate_clocked_ms = clocked,
                                             .applied = applied,
                                             .blind = c.clock_blind,
                                             .bursts = std::nullopt};
  if (!applied) return;
  // The candidate's worker reported less than its requests took: each of its samples is
  // at least what the engine's clock allows.
  Series bounded;
  bounded.wall = cand.series.wall;
  for (size_t i = 0; i < cand.clocked.size(); ++i)
    (cand.cold[i] ? bounded.cold : bounded.warm).push_back(std::max(cand.reported[i] / graph_calls_, floor[i]));
  cand.series = std::move(bounded);
}

void CaseTimer::BoundByCpu(CandidateSide& c) {
  // What the engine's clock of a request cannot see: work the candidate's other threads
  // did beside it, on other cores (a thread that read the sample's seed and drew its
  // inputs while the worker did). Applied on the CPU, where the worker's clock times
  // the call and the inputs are drawn on the host's cores.
  const SideSamples& ref = reference_samples_;
  SideSamples& cand = c.samples;
  if (method_ != kClock || !ref.cpu_read || !cand.cpu_read) return;
  const auto charge = ChargeOtherThreads({.reported = ref.reported, .others = ref.others,
                                          .call_others = ref.call_others, .cold = ref.cold},
                                         {.reported = cand.reported, .others = cand.others, .cold = cand.cold},
                                         UsableCpus(), req_.options.timing.clock_slack, graph_calls_,
                                         req_.options.timing.flush);
  if (!charge) return;
  std::optional<EngineClockCheck>& clock = c.record().engine_clock;
  if (!clock) clock.emplace();
  clock->cpu = EngineClockCheck::Cpu{.cores = charge->cores,
                                     .reference_overhead_ms = charge->reference_overhead_ms,
                                     .allowance_ms = charge->allowance_ms,
                                     .candidate_reported_ms = charge->candidate_reported_ms,
                                     .candidate_charged_ms = charge->candidate_charged_ms,
                                     .applied = charge->applied};
  if (!charge->applied) return;
  // The series as they stand (the engine's clock may have raised them): each sample is
  // at least its floor.
  size_t cold = 0, warm = 0;
  for (size_t i = 0; i < cand.cold.size(); ++i) {
    std::vector<double>& series = cand.cold[i] ? cand.series.cold : cand.series.warm;
    size_t& at = cand.cold[i] ? cold : warm;
    if (at < series.size()) series[at] = std::max(series[at], charge->floors[i]);
    ++at;
  }
}

bool CaseTimer::BoundByBursts() {
  const std::vector<double>& ref_warm = reference_samples_.series.warm;
  if (ref_warm.empty()) return true;
  const double ref_call = Median(ref_warm);
  // Bursts last about kBurstMs of the reference's device time (the warm-up's burst,
  // where the reference sent one): sized by its reports, which may carry a per-sample
  // cost 10x its device time, they would be too short to rise above the host's noise.
  const double ref_device = OptionalNumber(reference_warm_, protocol::field::kDeviceCallMs).value_or(ref_call);
  const double run_ms = std::max(std::min(ref_call, ref_device) * graph_calls_, 1e-6);
  const int replays = static_cast<int>(std::clamp(std::ceil(kBurstMs / run_ms), 1.0, double{kBurstMaxReplays}));
  double ref_clocked = -1;  // the reference's bursts, once, for the first blind candidate
  for (CandidateSide& c : sides_) {
    // Bursts for a side the samples' clock could not see, and for one it caught: the
    // samples' clock sets a forger's time only to within the host's noise (a forger
    // passed at 1.6x on an H100 so), bursts to within their own.
    std::optional<EngineClockCheck>& clock = c.record().engine_clock;
    const bool caught = clock && clock->applied;  // BoundByEngineClock found its reports short
    if (!c.active() || !(c.clock_blind || caught) || c.samples.series.warm.empty()) continue;
    const int side = SideOf(c);
    if (ref_clocked < 0 && !BurstPerCall(0, replays, &ref_clocked)) return false;
    double cand_clocked = 0;
    if (!BurstPerCall(side, replays, &cand_clocked)) continue;
    const double cand_call = Median(c.samples.series.warm);
    // What the reference's bursts take for what it reported is what the candidate's may
    // take for its report, read one of two ways, whichever allows the candidate more:
    // as a ratio (a loaded host stretches bursts, both sides alike: on the CPU 2 to
    // 3.5x; a warm back-to-back run may also be a little faster than a sample), or as
    // a gap (each reported sample carries a fixed cost that back-to-back runs do not:
    // with events, a sample's launch and synchronisation, 0.11 ms on an H100 around
    // 0.013 ms of relu, the same timer's on both sides). A forger that reports its
    // device time alone, below that gap, is caught by the second.
    const double reported_per_clocked = ref_clocked > 0 ? ref_call / ref_clocked : 1.0;
    const double gap = std::max(0.0, ref_call - ref_clocked);
    // What an honest report of the candidate's clocked bursts would at least have been.
    const double honest_call = std::min(cand_clocked * reported_per_clocked, cand_clocked + gap);
    // A side caught forging gets no slack: any excess of its bursts is added.
    const double slack = caught ? 0.0 : kBurstSlack;
    const bool applied = honest_call > cand_call * (1 + slack) + kClockFloorMs / graph_calls_ / replays;
    if (!clock) clock.emplace();  // BoundByEngineClock made it
    clock->bursts = EngineClockCheck::Bursts{.replays = replays,
                                             .pairs = kBurstPairs,
                                             .reference_reported_ms = ref_call,
                                             .reference_clocked_ms = ref_clocked,
                                             .candidate_reported_ms = cand_call,
                                             .candidate_clocked_ms = cand_clocked,
                                             .applied = applied};
    if (!applied || cand_call <= 0) continue;
    // The candidate's reports were short by this factor: every sample is scaled by it.
    const double factor = honest_call / cand_call;
    for (std::vector<double>* v : {&c.samples.series.cold, &c.samples.series.warm})
      for (double& x : *v) x *= factor;
  }
  ContinueAll();
  return AnyActive();
}

bool CaseTimer::BurstPerCall(int side, int replays, double* per_call_ms) {
  std::vector<double> per_call;
  for (int k = 0; k < kBurstPairs; ++k) {
    StopAllBut(side == 0 ? nullptr : &sides_[side - 1]);
    double short_ms = 0, long_ms = 0;
    if (!ClockedCall(side, TimeBurstRequest{method_, 1}.ToJson(), &short_ms)) return false;
    if (!ClockedCall(side, TimeBurstRequest{method_, 1 + replays}.ToJson(), &long_ms)) return false;
    per_call.push_back(std::max(0.0, long_ms - short_ms) / replays / graph_calls_);
  }
  *per_call_ms = Median(per_call);
  return true;
}

void CaseTimer::Summarize() {
  const bool flush = req_.options.timing.flush;
  for (CandidateSide& c : sides_) {
    if (!c.active()) continue;
    TimingRecord& r = c.record();
    TimedCase& result = c.member->timed;
    result.reference_ms = Describe(r.reference, reference_samples_.series, flush);
    result.candidate_ms = Describe(r.candidate, c.samples.series, flush);
    r.speedup = Ratio(result.reference_ms, result.candidate_ms);
    r.flushed = flush && r.reference.warm && r.candidate.warm;
    if (r.flushed) r.warm_speedup = Ratio(r.reference.warm->median_ms, r.candidate.warm->median_ms);
  }
}

std::optional<Json> CaseTimer::ClockedCall(int side, Json request, double* clocked) {
  const auto before = std::chrono::steady_clock::now();
  auto reply = Ask(side, std::move(request));
  *clocked = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - before).count();
  return reply;
}

void CaseTimer::Recheck() {
  CandidateSide& c = sides_[0];
  const auto began = std::chrono::steady_clock::now();
  RecheckOutput(c);  // a failure is the member's (timed.failure)
  c.record().stage_ms.finish =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
}

bool CaseTimer::RecheckOutput(CandidateSide& c) {
  const TimingSettings& t = req_.options.timing;
  bool device_held = true;  // the re-check's hold of the device, until its device work ends
  auto give_back = [&] {
    if (device_held && req_.turn.done) req_.turn.done();
    device_held = false;
  };
  TimingRecord& record = c.record();
  const std::string stem = req_.scratch + "/timed_" + std::to_string(req_.case_index);
  const std::string& cand_dir = session_.CandidateFolder(req_.scratch);
  const std::string cand_out = cand_dir + "/timed_" + std::to_string(req_.case_index) + "_candidate.kvt";
  const HandoffSpec handoff = NewHandoff(cand_dir, 1);
  TimeFinishRequest to_reference;
  if (t.recheck) to_reference.out = stem + "_reference.kvt";
  if (t.recheck && req_.outputs_on_device) to_reference.handoff = handoff.ToJson();
  to_reference.keep = true;  // for the next candidate's timing of this case
  auto ref_finish = AskReference(to_reference.ToJson());
  if (!ref_finish) return false;
  DeviceOffer offer = OfferIn(*ref_finish);  // ended on every way out
  TimeFinishRequest to_candidate;
  if (t.recheck) to_candidate.out = cand_out;
  if (offer.open()) to_candidate.handoff = handoff.Delivery(), to_candidate.output_layout = offer.layout();
  auto cand_finish = AskCandidate(c, to_candidate.ToJson());
  if (!cand_finish) return false;
  record.sensors_after = Field(*ref_finish, protocol::field::kSensors);
  if (Field(*cand_finish, protocol::field::kInputsModified) != Json(false)) {
    FailCandidate(c, OutcomeStatus::kMismatch, "the candidate modified its inputs while being timed");
    return false;
  }
  if (!t.recheck) {
    record.recheck = "skipped";
  } else {
    const OutputFiles files{.reference = stem + "_reference.kvt", .candidate = {cand_out},
                            .remove_reference = true, .device_stem = stem + "_handoff"};
    if (!CompareTimedOutputs(c, offer, *cand_finish, files, &TimingRecord::recheck_on, give_back)) return false;
    record.recheck = "ok";
  }
  give_back();
  return true;
}

}  // namespace

TimeStartRequest ReferenceSideStart(const TimedCaseRequest& request) {
  const TimingSettings& t = request.options.timing;
  // A graph is captured ahead by a side whose calls look short enough for one (the
  // quiet device decides in TimeCase).
  const double graph_below_ms = request.options.backend == Backend::kCpu || t.graph == GraphMode::kNever ? 0
                                : t.graph == GraphMode::kAlways ? 1e9 : t.graph_below_ms;
  return TimeStartRequest{.side = protocol::kSideReference,
                          .task = request.task.file.path,
                          .case_index = request.case_index,
                          .seed = request.seed,
                          .flush = t.flush,
                          .graph_below_ms = graph_below_ms};
}

int64_t TimingFootprintBytes(int64_t input_bytes, const EngineOptions& options, bool outputs_on_device) {
  const int64_t in = std::max<int64_t>(0, input_bytes);
  int64_t side = 0;  // what each side holds beyond the per-byte part
  const int64_t round = RoundSamples(options.timing) * in;
  if (outputs_on_device && round <= static_cast<int64_t>(kKeptSampleBytes)) side += round;  // ChooseSampleOutputs
  const bool graphs = options.backend != Backend::kCpu && options.timing.graph != GraphMode::kNever;
  if (graphs && (kGraphPoolSets + 1) * in <= kGraphInputBytes)
    side += std::min(kGraphInputBytes, (kGraphMaxCalls + kGraphPoolSets) * in) +
            std::min(kGraphOutputBytes, kGraphMaxCalls * in);
  return kTimingBytesPerInputByte * in + 2 * side;
}

std::optional<TrustedFailure> TimeReferenceAlone(DeviceSession& session, const TimedCaseRequest& request) {
  const TimingSettings& t = request.options.timing;
  const bool gpu = request.options.backend != Backend::kCpu;
  std::optional<TrustedFailure> failed;
  auto ask = [&](const Json& r) -> std::optional<Json> {
    auto reply = session.AskReference(r, request.options.timeouts.time, "the reference");
    if (reply) return std::move(*reply);
    failed = reply.failure();
    return std::nullopt;
  };
  TimeStartRequest start = ReferenceSideStart(request);
  start.fresh = true;
  if (!ask(start.ToJson()) || !ask(TimeWarmupRequest{std::max(0, t.warmup_ms)}.ToJson())) return failed;
  std::string method = gpu ? kEvents : kClock;
  if (gpu && t.graph != GraphMode::kNever) {
    auto graph = ask(TimeGraphRequest{}.ToJson());
    if (!graph) return failed;
    if (Field(*graph, protocol::field::kGraphFailed).is_null() && Number(*graph, "graph_calls", 0) >= 1)
      method = kGraph;
  }
  const int n = RoundSamples(t);
  const uint64_t nonce = SecretNonce();
  for (int i = 0; i < n; ++i) {
    if (t.flush && i < n / 2 && !ask(TimeFlushRequest{}.ToJson())) return failed;
    TimeSampleRequest sample{method, SampleSeed(nonce, i)};
    if (request.outputs_on_device) sample.keep_as = i;
    if (!ask(sample.ToJson())) return failed;
  }
  ask(TimeFinishRequest{}.ToJson());  // drops the side
  return failed;
}

PreparedCase PrepareCase(DeviceSession& session, const TimedCaseRequest& request) {
  TurnMember alone{&session, &request};
  return CaseTimer(alone, {&alone}).Prepare();
}

void TimeTurn(TurnMember& leader, const std::function<std::vector<TurnMember*>()>& gather) {
  CaseTimer(leader, {&leader}).Measure(gather);
}

void RecheckCase(TurnMember& member) {
  if (member.timed.failure) return;
  CaseTimer(member, {&member}).Recheck();
}

TimedCase TimeCase(DeviceSession& session, const TimedCaseRequest& request, PreparedCase prepared) {
  TurnMember alone{&session, &request, std::move(prepared)};
  TimeTurn(alone);
  RecheckCase(alone);
  return std::move(alone.timed);
}

}  // namespace kvault
