#include "serve/request.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "candidate/source_language.h"
#include "engine/outcome.h"

namespace kvault::serve {
namespace {

// The reader of one request object: each getter checks the field's type and bounds
// and records the first problem, naming the field.
class Fields {
 public:
  explicit Fields(const Json& object) : j_(object) {
    if (!j_.is_object()) Fail("", "a request must be a JSON object");
  }

  std::string String(const char* name, size_t max_bytes, bool required = false) {
    if (!ok() || !Has(name)) {
      if (ok() && required) Fail(name, "is required");
      return "";
    }
    const Json& v = j_[name];
    if (!v.is_string()) return Fail(name, "must be a string"), "";
    const auto& s = v.get_ref<const std::string&>();
    if (s.size() > max_bytes)
      return Fail(name, "is " + std::to_string(s.size()) + " bytes, over the limit of " +
                            std::to_string(max_bytes)), "";
    if (required && s.find_first_not_of(" \t\r\n") == std::string::npos) return Fail(name, "is empty"), "";
    return s;
  }

  std::optional<double> Number(const char* name, double lo, double hi) {
    if (!ok() || !Has(name)) return std::nullopt;
    const Json& v = j_[name];
    if (!v.is_number()) return Fail(name, "must be a number"), std::nullopt;
    double x = v.get<double>();
    if (!std::isfinite(x) || x < lo || x > hi)
      return Fail(name, "must be between " + Short(lo) + " and " + Short(hi)), std::nullopt;
    return x;
  }

  std::string OneOf(const char* name, std::initializer_list<const char*> allowed, std::string fallback) {
    std::string s = String(name, kMaxKeyBytes);
    if (!ok() || !Has(name)) return fallback;
    for (const char* a : allowed)
      if (s == a) return s;
    std::string list;
    for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
    Fail(name, "must be one of " + list + ", got '" + s + "'");
    return fallback;
  }

  std::vector<double> Numbers(const char* name, size_t max_items) {
    std::vector<double> out;
    if (!ok() || !Has(name)) return out;
    const Json& v = j_[name];
    if (!v.is_array()) return Fail(name, "must be an array of numbers"), out;
    if (v.size() > max_items) return Fail(name, "has more than " + std::to_string(max_items) + " items"), out;
    for (const Json& x : v) {
      if (!x.is_number() || !std::isfinite(x.get<double>())) return Fail(name, "must hold finite numbers"), out;
      out.push_back(x.get<double>());
    }
    return out;
  }

  bool Has(const char* name) const { return j_.is_object() && j_.contains(name) && !j_[name].is_null(); }
  bool ok() const { return error_.empty(); }
  // The first problem wins: "<field>: <why>", or just <why> for the whole object.
  void Fail(const std::string& name, const std::string& why) {
    if (!error_.empty()) return;
    error_ = name.empty() ? why : name + ": " + why;
  }
  const std::string& error() const { return error_; }

 private:
  static std::string Short(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return buf;
  }
  const Json& j_;
  std::string error_;
};

RewardKind ParseReward(Fields& f, const char* name, RewardKind fallback) {
  std::string s = f.OneOf(name, {"paper", "hip-rl"}, std::string(ToString(fallback)));
  return RewardKindFromString(s).value_or(fallback);
}

// The fields every protocol shares once its own names are mapped.
void ReadCommon(Fields& f, ServeRequest& r, const RequestDefaults& d) {
  r.atol = f.Number("atol", 0, 1e6);
  r.rtol = f.Number("rtol", 0, 1e6);
  r.reward = ParseReward(f, "reward", d.reward);
  r.policy = f.OneOf("policy", {"task", "any", "fused", "custom_kernel"}, d.policy);
  r.run = f.String("run", kMaxKeyBytes);
  if (r.run.empty()) r.run = d.run;
  r.idempotency_key = f.String("idempotency_key", kMaxKeyBytes);
  r.sample = f.String("sample", kMaxKeyBytes);
  if (std::any_of(r.sample.begin(), r.sample.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
    f.Fail("sample", "must not hold control characters");
  r.deadline_s = f.Number("deadline_s", 0.001, 7 * 24 * 3600.0);
}

Result<std::vector<ServeRequest>> ParseList(const Json& body, const char* field,
                                            const RequestDefaults& d,
                                            Result<ServeRequest> (*one)(const Json&, const RequestDefaults&)) {
  if (!body.is_object() || !body.contains(field) || !body[field].is_array())
    return Error{std::string("the body must be a JSON object with an array '") + field + "'"};
  const Json& items = body[field];
  if (items.empty()) return Error{std::string("'") + field + "' is empty"};
  if (items.size() > kMaxBatch)
    return Error{std::string("'") + field + "' has " + std::to_string(items.size()) +
                 " items, over the limit of " + std::to_string(kMaxBatch)};
  std::vector<ServeRequest> out;
  out.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    auto r = one(items[i], d);
    if (!r) return Error{std::string(field) + "[" + std::to_string(i) + "]: " + r.error()};
    out.push_back(std::move(*r));
  }
  return out;
}

std::string PyRepr(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

}  // namespace

Result<ServeRequest> ParseVerifyRequest(const Json& body, const RequestDefaults& defaults) {
  Fields f(body);
  ServeRequest r;
  r.task_source = f.String("task_source", kMaxSourceBytes, /*required=*/true);
  r.task_name = f.String("task_name", kMaxKeyBytes);
  r.code = f.String("code", kMaxSourceBytes);
  r.completion = f.String("completion", kMaxCompletionBytes);
  // A HIP-to-HIP baseline is read (and bounded) but not used: speedups are against
  // the PyTorch module and the HIP-RL near-copy check is not made (docs/serve.md).
  f.String("baseline_code", kMaxSourceBytes);
  r.language = f.OneOf("language", {"hip", "cuda", "cpp", "python", "triton"}, "");
  ReadCommon(f, r, defaults);
  r.previous_rewards = f.Numbers("previous_rewards", kMaxPreviousTurns);
  r.discount = f.Number("discount", 0, 1).value_or(0.6);
  if (f.ok() && f.Has("code") == f.Has("completion"))
    f.Fail("", "give exactly one of 'code' and 'completion'");
  if (!f.ok()) return Error{f.error()};
  if (r.task_name.empty()) r.task_name = "task";
  return r;
}

Result<std::vector<ServeRequest>> ParseBatchRequest(const Json& body, const RequestDefaults& defaults) {
  return ParseList(body, "requests", defaults, &ParseVerifyRequest);
}

Result<ServeRequest> ParseHipRequest(const Json& item, const RequestDefaults& defaults) {
  Fields f(item);
  ServeRequest r;
  r.task_name = f.String("kernel_name", kMaxKeyBytes);
  r.code = f.String("hip_code", kMaxSourceBytes, /*required=*/true);
  r.task_source = f.String("pytorch_module_code", kMaxSourceBytes, /*required=*/true);
  // The functional twin and the baseline kernel are read (and bounded) but the
  // reference is always the module: speedups are against PyTorch (docs/serve.md).
  f.String("pytorch_functional_code", kMaxSourceBytes);
  f.String("hip_ref_code", kMaxSourceBytes);
  f.Number("compile_timeout_s", 0, 86400);
  f.Number("run_timeout_s", 0, 86400);
  r.language = "hip";
  ReadCommon(f, r, defaults);
  if (!f.ok()) return Error{f.error()};
  if (r.task_name.empty()) r.task_name = "kernel";
  return r;
}

Result<std::vector<ServeRequest>> ParseHipBatch(const Json& body, const RequestDefaults& defaults) {
  return ParseList(body, "requests", defaults, &ParseHipRequest);
}

const GeakParts* TritonSuite::Find(const std::string& filename) const {
  auto it = std::lower_bound(files.begin(), files.end(), filename,
                             [](const auto& e, const std::string& n) { return e.first < n; });
  return it != files.end() && it->first == filename ? &it->second : nullptr;
}

Result<ServeRequest> ParseTritonRequest(const Json& body, const TritonSuite* suite,
                                        const RequestDefaults& defaults) {
  Fields f(body);
  auto version = f.Number("protocol_version", 0, 1e9);
  if (f.ok() && (!version || *version != 1)) f.Fail("protocol_version", "must be 1");
  std::string code = f.String("code", kMaxSourceBytes, /*required=*/true);
  std::string filename = f.String("filename", kMaxKeyBytes, /*required=*/true);
  ServeRequest r;
  ReadCommon(f, r, defaults);
  if (!f.ok()) return Error{f.error()};
  if (!suite) return Error{"this server has no Triton suite (start it with --triton-suite)"};
  const GeakParts* task = suite->Find(filename);
  if (!task) return Error{"filename: '" + filename + "' is not a file of the server's Triton suite"};
  auto implementation = CandidateImplementation(code);
  if (!implementation) return Error{"code: " + implementation.error()};
  r.task_name = filename.substr(0, filename.rfind('.'));
  r.suite_task = true;
  r.task_source = MakeGeakTask(suite->format, filename, *task);
  r.code = MakeGeakCandidate(suite->format, *implementation, *task);
  r.language = "triton";
  return r;
}

std::string CandidateExtension(const std::string& language, const std::string& code) {
  if (language == "hip") return ".hip";
  if (language == "cuda") return ".cu";
  if (language == "cpp") return ".cpp";
  if (language == "python" || language == "triton") return ".py";
  const std::string detected = DetectSourceLanguage(code);
  return detected == "python" ? ".py" : detected == "hip" ? ".hip" : detected == "cuda" ? ".cu" : ".cpp";
}

std::string EffectiveTaskSource(const ServeRequest& r) {
  if (!r.atol && !r.rtol) return r.task_source;
  std::string out = r.task_source;
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += "\n# Tolerances of the request that submitted this task (kvault serve).\n";
  out += "KVAULT_META = dict(globals().get('KVAULT_META') or {})\n";
  if (r.atol) out += "KVAULT_META['atol'] = " + PyRepr(*r.atol) + "\n";
  if (r.rtol) out += "KVAULT_META['rtol'] = " + PyRepr(*r.rtol) + "\n";
  return out;
}

namespace {

Json Optional(const std::optional<double>& x) { return x && std::isfinite(*x) ? Json(*x) : Json(nullptr); }

// A result's `error`: why it holds no reward, and whether sending it again may help.
Json ErrorJson(ErrorKind kind, const std::string& message) {
  return {{"kind", std::string(ToString(kind))}, {"message", message}, {"retry", Retryable(kind)}};
}

Json RewardJson(const ServeRequest& r, const ServeOutcome& o) {
  if (o.error_kind) return nullptr;
  RewardInput in;
  in.status = o.status;
  in.compiled = o.compiled;
  in.correct = o.correct;
  in.speedup = o.speedup;
  in.speedup_implausible = o.speedup_implausible;
  const double paper = TurnReward(RewardKind::kPaper, in);
  const double hip_rl = TurnReward(RewardKind::kHipRl, in);
  const double value = r.reward == RewardKind::kPaper ? paper : hip_rl;
  Json j = {{"kind", std::string(ToString(r.reward))}, {"value", value}, {"paper", paper}, {"hip_rl", hip_rl}};
  if (!r.previous_rewards.empty()) {
    std::vector<double> turns = r.previous_rewards;
    turns.push_back(value);
    j["return"] = DiscountedReturn(turns, r.discount);
  }
  return j;
}

}  // namespace

Json ResultJson(const ServeRequest& r, const ServeOutcome& o, const std::string& id) {
  Json j = {{"id", id},
            {"status", o.status.empty() ? Json(nullptr) : Json(o.status)},
            {"compiled", o.compiled},
            {"correct", o.correct},
            {"speedup", Optional(o.speedup)},
            {"reference_ms", Optional(o.reference_ms)},
            {"candidate_ms", Optional(o.candidate_ms)},
            {"speed_rewarded", !o.speedup_implausible},
            {"message", o.message},
            {"diagnostics", o.diagnostics},
            {"feedback", o.feedback},
            {"policy", o.policy},
            {"reward", RewardJson(r, o)},
            {"task", o.task},
            {"task_hash", o.task_hash},
            {"candidate_hash", o.candidate_hash},
            {"from_store", o.from_store},
            {"seconds", o.seconds},
            {"phases", o.phases},
            {"cases", o.cases}};
  if (!o.foreign_language.empty()) j["foreign_language"] = o.foreign_language;
  if (o.error_kind) j["error"] = ErrorJson(*o.error_kind, o.message);
  return j;
}

namespace {

// Per correctness case: the comparison's worst errors, where the record has them.
Json HipStats(const Json& cases) {
  Json stats = Json::array();
  if (!cases.is_array()) return stats;
  for (const Json& c : cases) {
    if (!c.is_object() || !c.contains("max_abs_error")) continue;
    stats.push_back({{"case", c.value("case", Json(nullptr))},
                     {"max_abs_diff", c.value("max_abs_error", Json(nullptr))},
                     {"max_rel_diff", c.value("max_rel_error", Json(nullptr))},
                     {"mean_abs_diff", c.value("mean_abs_error", Json(nullptr))}});
  }
  return stats;
}

// The outcomes at which a HIP sandbox would say the kernel ran (it got past loading).
bool Ran(const std::string& status) {
  auto s = OutcomeStatusFromString(status);
  if (!s) return false;
  switch (*s) {
    case OutcomeStatus::kPassed:
    case OutcomeStatus::kMismatch:
    case OutcomeStatus::kPolicyViolation:
      return true;
    default:
      return false;
  }
}

}  // namespace

Json HipResponseJson(const ServeRequest& r, const ServeOutcome& o, const std::string& kernel_name) {
  Json j = {{"kernel_name", kernel_name},
            {"compile_ok", o.compiled},
            {"run_ok", Ran(o.status) || o.correct},
            {"match_ok", o.correct},
            {"speedup", Optional(o.speedup)},
            {"reason", o.message},
            {"status", o.status.empty() ? Json(nullptr) : Json(o.status)},
            {"stats", HipStats(o.cases)},
            {"timing", {{"reference_ms", Optional(o.reference_ms)}, {"candidate_ms", Optional(o.candidate_ms)}}},
            {"reward", RewardJson(r, o)}};
  if (!o.foreign_language.empty()) j["foreign_language"] = o.foreign_language;
  if (o.error_kind) j["error"] = ErrorJson(*o.error_kind, o.message);
  return j;
}

Json TritonResponseJson(const ServeOutcome& o) {
  return {{"compiled", o.compiled},
          {"correct", o.correct},
          {"speedup", Optional(o.speedup)},
          {"latency_ms", Optional(o.candidate_ms)},
          {"baseline_latency_ms", Optional(o.reference_ms)},
          {"feedback", o.message},
          {"error_type", o.correct            ? Json(nullptr)
                         : !o.status.empty()   ? Json(o.status)
                         : o.error_kind        ? Json(std::string(ToString(*o.error_kind)))
                                               : Json("")},
          {"diagnostics", o.diagnostics}};
}

}  // namespace kvault::serve
