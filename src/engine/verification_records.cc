#include "engine/verification_records.h"

#include <algorithm>
#include <cmath>

namespace kvault {
namespace {

// --- names ---

constexpr std::array<std::string_view, kPhases.size()> kPhaseNames = {
    "describe",    "build",          "record_inline", "memory_wait", "worker_start", "load",
    "correctness", "timing_prepare", "timing_wait",   "timing",      "recheck",      "gate_wait"};

struct StatusName {
  CorrectnessRecord::Status status;
  std::string_view name;
};
constexpr StatusName kStatusNames[] = {
    {CorrectnessRecord::Status::kOk, "ok"},
    {CorrectnessRecord::Status::kMismatch, "mismatch"},
    {CorrectnessRecord::Status::kInputsModified, "inputs_modified"},
    {CorrectnessRecord::Status::kOutputAliasesInput, "output_aliases_input"},
};

// The `kind` of each record but the correctness runs' (which have none).
constexpr char kKindTiming[] = "timing";
constexpr char kKindRecheck[] = "recheck";
constexpr char kKindAloneAfterOom[] = "alone_after_oom";
constexpr char kKindPhases[] = "phases";

// --- writing ---

Json Nullable(const std::optional<double>& x) {
  return x && std::isfinite(*x) ? Json(*x) : Json(nullptr);
}

void PutIf(Json& j, const char* key, const std::optional<double>& x) {
  if (x) j[key] = *x;
}

Json ToJson(const CorrectnessRecord& r) {
  Json j{{"case", r.case_name},
         {"seed", r.seed},
         {"distribution", r.distribution},
         {"status", std::string(ToString(r.status))}};
  if (const auto& c = r.comparison) {
    j["call"] = c->call;
    j["max_abs_error"] = c->max_abs_error;
    j["max_rel_error"] = c->max_rel_error;
    j["mismatched"] = c->mismatched;
    j["compared"] = c->compared;
    if (!c->compared_on.empty()) j["compared_on"] = c->compared_on;
    if (r.status == CorrectnessRecord::Status::kMismatch) {
      j["message"] = c->message;
      j["worst_path"] = c->worst_path;
      j["worst_index"] = c->worst_index;
    }
  }
  return j;
}

void PutSide(Json& j, const std::string& role, const TimedSide& s) {
  j[role + "_call_ms"] = Nullable(s.call_ms);
  j[role + "_device_call_ms"] = Nullable(s.device_call_ms);
  if (const auto& p = s.primary) {
    j[role + "_ms"] = p->median_ms;
    j[role + "_iqr_ms"] = p->iqr_ms;
    j[role + "_samples"] = p->samples;
    j[role + "_noise"] = std::isfinite(p->noise) ? Json(p->noise) : Json(nullptr);
  }
  for (auto [suffix, spread] : {std::pair{"_cold", &s.cold}, {"_warm", &s.warm}}) {
    if (!*spread) continue;
    j[role + suffix + "_ms"] = (*spread)->median_ms;
    j[role + suffix + "_iqr_ms"] = (*spread)->iqr_ms;
  }
  PutIf(j, (role + "_wall_ms").c_str(), s.wall_ms);
}

Json ToJson(const EngineClockCheck& c) {
  Json j{{"reference_overhead_ms", c.reference_overhead_ms},
         {"reference_overheads_ms", c.reference_overheads_ms},
         {"allowance_ms", c.allowance_ms},
         {"candidate_reported_ms", c.candidate_reported_ms},
         {"candidate_clocked_ms", c.candidate_clocked_ms},
         {"applied", c.applied},
         {"blind", c.blind}};
  if (const auto& b = c.bursts)
    j["bursts"] = Json{{"replays", b->replays},
                       {"pairs", b->pairs},
                       {"reference_reported_ms", b->reference_reported_ms},
                       {"reference_clocked_ms", b->reference_clocked_ms},
                       {"candidate_reported_ms", b->candidate_reported_ms},
                       {"candidate_clocked_ms", b->candidate_clocked_ms},
                       {"applied", b->applied}};
  if (const auto& u = c.cpu)
    j["cpu"] = Json{{"cores", u->cores},
                    {"reference_overhead_ms", u->reference_overhead_ms},
                    {"allowance_ms", u->allowance_ms},
                    {"candidate_reported_ms", u->candidate_reported_ms},
                    {"candidate_charged_ms", u->candidate_charged_ms},
                    {"applied", u->applied}};
  return j;
}

// The steps of `stage_ms`, by name.
constexpr std::pair<const char*, std::optional<double> TimingSteps::*> kSteps[] = {
    {"prepare", &TimingSteps::prepare},
    {"drain", &TimingSteps::drain},
    {"start", &TimingSteps::start},
    {"sampling", &TimingSteps::sampling},
    {"sampling_compare", &TimingSteps::sampling_compare},
    {"compare", &TimingSteps::compare},
    {"finish", &TimingSteps::finish}};

Json ToJson(const TimingSteps& s) {
  Json j = Json::object();
  for (const auto& [name, step] : kSteps) PutIf(j, name, s.*step);
  return j;
}

Json ToJson(const TimingRecord& r) {
  Json j{{"kind", kKindTiming},
         {"case", r.case_name},
         {"device_quiet", r.device_quiet},
         {"turn_candidates", r.turn_candidates},
         {"warmup_ms", r.warmup_ms},
         {"flush_bytes", r.flush_bytes ? Json(*r.flush_bytes) : Json(nullptr)},
         {"reference_kept", r.reference_kept},
         {"sensors_before", r.sensors_before.is_object() ? r.sensors_before : Json(nullptr)},
         {"sensors_after", r.sensors_after.is_object() ? r.sensors_after : Json(nullptr)},
         {"method", r.method},
         {"samples_on", r.samples_on},
         {"rounds", r.rounds},
         {"stop", r.stop},
         {"samples_compared", r.samples_compared},
         {"speedup", Nullable(r.speedup)},
         {"stage_ms", ToJson(r.stage_ms)}};
  if (r.graph_fallback) j["graph_fallback"] = *r.graph_fallback;
  if (r.graph_calls) j["reference_graph_calls"] = j["candidate_graph_calls"] = *r.graph_calls;
  PutSide(j, "reference", r.reference);
  PutSide(j, "candidate", r.candidate);
  if (r.flushed) j["warm_speedup"] = Nullable(r.warm_speedup);
  if (r.engine_clock) j["engine_clock"] = ToJson(*r.engine_clock);
  PutIf(j, "recheck_max_abs_error", r.recheck_max_abs_error);
  if (!r.recheck.empty()) j["recheck"] = r.recheck;
  if (!r.recheck_on.empty()) j["recheck_on"] = r.recheck_on;
  return j;
}

Json ToJson(const RecheckRecord& r) {
  Json j{{"kind", kKindRecheck}, {"bound", r.bound}, {"speedup_before", r.speedup_before}};
  PutIf(j, "judged_before", r.judged_before);
  if (!r.failed.empty()) {
    j["failed"] = r.failed;
    return j;
  }
  j["speedup_after"] = Nullable(r.speedup_after);
  PutIf(j, "judged_after", r.judged_after);
  j["still_implausible"] = r.still_implausible;
  j["speed_rewarded"] = !r.still_implausible;
  if (!r.why.empty()) j["why"] = r.why;
  return j;
}

Json ToJson(const AloneAfterOomRecord& r) {
  Json j{{"kind", kKindAloneAfterOom}, {"where", r.where}, {"first", r.first}};
  if (r.whole_memory) j["whole_memory"] = true;
  return j;
}

// --- reading: a stored record is data of an earlier engine, maybe of another version ---

// The field `key` of `j` read as T; nullopt when absent or of another type.
std::optional<double> Double(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}
// A number or null: NaN for null (a ratio or noise that was not finite).
std::optional<double> DoubleOrNan(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it != j.end() && it->is_null()) return std::nan("");
  return Double(j, key);
}
std::optional<int64_t> Integer(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double x = it->get<double>();
  if (!std::isfinite(x) || std::abs(x) > 9e15) return std::nullopt;
  return it->is_number_integer() ? it->get<int64_t>() : static_cast<int64_t>(x);
}
std::string Text(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
std::optional<std::string> OptionalText(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}
bool Flag(const Json& j, const char* key, bool fallback = false) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}
std::optional<CorrectnessRecord::Status> StatusFromString(std::string_view name) {
  for (const StatusName& s : kStatusNames)
    if (s.name == name) return s.status;
  return std::nullopt;
}

std::optional<CorrectnessRecord> ReadCorrectness(const Json& j) {
  auto status = StatusFromString(Text(j, "status"));
  if (!status) return std::nullopt;
  CorrectnessRecord r;
  r.case_name = Text(j, "case");
  r.seed = Integer(j, "seed").value_or(0);
  r.distribution = Text(j, "distribution");
  r.status = *status;
  if (j.contains("max_abs_error") || j.contains("call")) {
    CorrectnessRecord::Comparison c;
    c.call = Text(j, "call");
    c.max_abs_error = Double(j, "max_abs_error").value_or(0);
    c.max_rel_error = Double(j, "max_rel_error").value_or(0);
    c.mismatched = Integer(j, "mismatched").value_or(0);
    c.compared = Integer(j, "compared").value_or(0);
    c.compared_on = Text(j, "compared_on");
    c.message = Text(j, "message");
    c.worst_path = Text(j, "worst_path");
    if (auto it = j.find("worst_index"); it != j.end() && it->is_array())
      for (const Json& x : *it)
        if (x.is_number_integer()) c.worst_index.push_back(x.get<int64_t>());
    r.comparison = std::move(c);
  }
  return r;
}

TimedSide ReadSide(const Json& j, const std::string& role) {
  TimedSide s;
  s.call_ms = Double(j, (role + "_call_ms").c_str());
  s.device_call_ms = Double(j, (role + "_device_call_ms").c_str());
  if (auto median = Double(j, (role + "_ms").c_str())) {
    TimedSide::Summary p;
    p.median_ms = *median;
    p.iqr_ms = Double(j, (role + "_iqr_ms").c_str()).value_or(0);
    p.samples = Integer(j, (role + "_samples").c_str()).value_or(0);
    p.noise = DoubleOrNan(j, (role + "_noise").c_str()).value_or(std::nan(""));
    s.primary = p;
  }
  for (auto [suffix, spread] : {std::pair{"_cold", &s.cold}, {"_warm", &s.warm}}) {
    auto median = Double(j, (role + suffix + "_ms").c_str());
    if (!median) continue;
    *spread = TimedSide::Spread{*median, Double(j, (role + suffix + "_iqr_ms").c_str()).value_or(0)};
  }
  s.wall_ms = Double(j, (role + "_wall_ms").c_str());
  return s;
}

EngineClockCheck ReadEngineClock(const Json& j) {
  EngineClockCheck c;
  c.reference_overhead_ms = Double(j, "reference_overhead_ms").value_or(0);
  if (auto it = j.find("reference_overheads_ms"); it != j.end() && it->is_array())
    for (const Json& x : *it)
      if (x.is_number()) c.reference_overheads_ms.push_back(x.get<double>());
  c.allowance_ms = Double(j, "allowance_ms").value_or(0);
  c.candidate_reported_ms = Double(j, "candidate_reported_ms").value_or(0);
  c.candidate_clocked_ms = Double(j, "candidate_clocked_ms").value_or(0);
  c.applied = Flag(j, "applied");
  c.blind = Flag(j, "blind");
  if (auto it = j.find("bursts"); it != j.end() && it->is_object()) {
    const Json& b = *it;
    c.bursts = EngineClockCheck::Bursts{Integer(b, "replays").value_or(0),
                                        Integer(b, "pairs").value_or(0),
                                        Double(b, "reference_reported_ms").value_or(0),
                                        Double(b, "reference_clocked_ms").value_or(0),
                                        Double(b, "candidate_reported_ms").value_or(0),
                                        Double(b, "candidate_clocked_ms").value_or(0),
                                        Flag(b, "applied")};
  }
  if (auto it = j.find("cpu"); it != j.end() && it->is_object()) {
    const Json& u = *it;
    c.cpu = EngineClockCheck::Cpu{Integer(u, "cores").value_or(0),
                                  Double(u, "reference_overhead_ms").value_or(0),
                                  Double(u, "allowance_ms").value_or(0),
                                  Double(u, "candidate_reported_ms").value_or(0),
                                  Double(u, "candidate_charged_ms").value_or(0),
                                  Flag(u, "applied")};
  }
  return c;
}

TimingSteps ReadSteps(const Json& j) {
  TimingSteps s;
  if (!j.is_object()) return s;
  for (const auto& [name, step] : kSteps) s.*step = Double(j, name);
  return s;
}

TimingRecord ReadTiming(const Json& j) {
  TimingRecord r;
  r.case_name = Text(j, "case");
  r.device_quiet = Flag(j, "device_quiet", true);
  r.turn_candidates = Integer(j, "turn_candidates").value_or(1);
  r.warmup_ms = Integer(j, "warmup_ms").value_or(0);
  r.flush_bytes = Integer(j, "flush_bytes");
  r.reference_kept = Flag(j, "reference_kept");
  r.sensors_before = j.value("sensors_before", Json());
  r.sensors_after = j.value("sensors_after", Json());
  if (!r.sensors_before.is_object()) r.sensors_before = nullptr;
  if (!r.sensors_after.is_object()) r.sensors_after = nullptr;
  r.method = Text(j, "method");
  r.graph_fallback = OptionalText(j, "graph_fallback");
  r.graph_calls = Integer(j, "reference_graph_calls");
  r.samples_on = Text(j, "samples_on");
  r.rounds = Integer(j, "rounds").value_or(0);
  r.stop = Text(j, "stop");
  r.samples_compared = Integer(j, "samples_compared").value_or(0);
  r.reference = ReadSide(j, "reference");
  r.candidate = ReadSide(j, "candidate");
  r.speedup = Double(j, "speedup");
  r.flushed = j.contains("warm_speedup");
  r.warm_speedup = Double(j, "warm_speedup");
  if (auto it = j.find("engine_clock"); it != j.end() && it->is_object())
    r.engine_clock = ReadEngineClock(*it);
  r.recheck_max_abs_error = Double(j, "recheck_max_abs_error");
  r.recheck = Text(j, "recheck");
  r.recheck_on = Text(j, "recheck_on");
  r.stage_ms = ReadSteps(j.value("stage_ms", Json()));
  return r;
}

RecheckRecord ReadRecheck(const Json& j) {
  RecheckRecord r;
  r.bound = Double(j, "bound").value_or(0);
  r.speedup_before = Double(j, "speedup_before").value_or(0);
  r.judged_before = Double(j, "judged_before");
  r.judged_after = Double(j, "judged_after");
  r.failed = Text(j, "failed");
  r.speedup_after = Double(j, "speedup_after");
  r.still_implausible = Flag(j, "still_implausible");
  r.why = Text(j, "why");
  return r;
}

}  // namespace

// --- phases ---

std::string_view ToString(Phase p) {
  return kPhaseNames[static_cast<size_t>(p)];
}

std::optional<Phase> PhaseFromString(std::string_view name) {
  for (Phase p : kPhases)
    if (ToString(p) == name) return p;
  return std::nullopt;
}

bool IsDevicePhase(Phase p) {
  return p == Phase::kCorrectness || p == Phase::kTiming || p == Phase::kRecheck;
}

void Phases::Add(Phase p, double seconds) {
  seconds_[Index(p)] = seconds_[Index(p)].value_or(0.0) + seconds;
}

bool Phases::empty() const {
  return std::none_of(seconds_.begin(), seconds_.end(),
                      [](const std::optional<double>& s) { return s.has_value(); });
}

Json Phases::ToJson() const {
  Json j = Json::object();
  for (Phase p : kPhases)
    if (auto s = Seconds(p)) j[std::string(kvault::ToString(p))] = *s;
  return j;
}

Phases Phases::FromJson(const Json& seconds) {
  Phases phases;
  if (!seconds.is_object()) return phases;
  for (const auto& [name, value] : seconds.items()) {
    auto p = PhaseFromString(name);
    if (p && value.is_number()) phases.Set(*p, value.get<double>());
  }
  return phases;
}

// --- records ---

std::string_view ToString(CorrectnessRecord::Status s) {
  for (const StatusName& n : kStatusNames)
    if (n.status == s) return n.name;
  return "?";
}

bool TimedSide::Summary::operator==(const Summary& o) const {
  const bool same_noise = noise == o.noise || (std::isnan(noise) && std::isnan(o.noise));
  return median_ms == o.median_ms && iqr_ms == o.iqr_ms && samples == o.samples && same_noise;
}

std::vector<const TimingRecord*> Timings(const VerificationRecords& records, size_t from) {
  std::vector<const TimingRecord*> out;
  for (size_t i = from; i < records.size(); ++i)
    if (const auto* t = std::get_if<TimingRecord>(&records[i])) out.push_back(t);
  return out;
}

const RecheckRecord* FindRecheck(const VerificationRecords& records) {
  for (auto it = records.rbegin(); it != records.rend(); ++it)
    if (const auto* r = std::get_if<RecheckRecord>(&*it)) return r;
  return nullptr;
}

Json RecordJson(const VerificationRecord& record) {
  return std::visit([](const auto& r) { return ToJson(r); }, record);
}

Json CasesJson(const VerificationRecords& records, const std::optional<Phases>& phases) {
  Json cases = Json::array();
  for (const VerificationRecord& r : records) cases.push_back(RecordJson(r));
  if (phases) cases.push_back(Json{{"kind", kKindPhases}, {"seconds", phases->ToJson()}});
  return cases;
}

StoredCases ReadCases(const Json& cases) {
  StoredCases out;
  if (!cases.is_array()) return out;
  for (const Json& j : cases) {
    if (!j.is_object()) continue;
    auto kind = j.find("kind");
    if (kind == j.end()) {
      if (auto r = ReadCorrectness(j)) out.records.push_back(std::move(*r));
    } else if (*kind == kKindTiming) {
      out.records.push_back(ReadTiming(j));
    } else if (*kind == kKindRecheck) {
      out.records.push_back(ReadRecheck(j));
    } else if (*kind == kKindAloneAfterOom) {
      out.records.push_back(AloneAfterOomRecord{Text(j, "where"), Text(j, "first"), Flag(j, "whole_memory")});
    } else if (*kind == kKindPhases && j.contains("seconds")) {
      out.phases = Phases::FromJson(j["seconds"]);
    }
  }
  return out;
}

}  // namespace kvault
