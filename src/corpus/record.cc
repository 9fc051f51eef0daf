#include "corpus/record.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "util/sha256.h"
#include "util/strings.h"

namespace kvault::corpus {
namespace {

Json OptionalNumber(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}

// Reads typed fields of one JSON object; the first wrong type is kept as the error.
class FieldReader {
 public:
  FieldReader(const Json& object, std::string where) : o_(object), where_(std::move(where)) {}

  void Text(const char* key, std::string& out) {
    const Json* v = Find(key);
    if (!v) return;
    if (!v->is_string()) return Wrong(key, "a string");
    out = v->get<std::string>();
  }
  void Int(const char* key, int64_t& out) {
    const Json* v = Find(key);
    if (!v) return;
    if (!v->is_number_integer()) return Wrong(key, "an integer");
    out = v->get<int64_t>();
  }
  void Number(const char* key, double& out) {
    const Json* v = Find(key);
    if (!v) return;
    if (!v->is_number()) return Wrong(key, "a number");
    out = v->get<double>();
  }
  void OptionalNumber(const char* key, std::optional<double>& out) {
    const Json* v = Find(key);
    if (!v) return;
    if (!v->is_number()) return Wrong(key, "a number or null");
    out = v->get<double>();
  }
  // An object field, or nullptr when absent (or of the wrong type: then an error).
  const Json* Object(const char* key) {
    const Json* v = Find(key);
    if (v && !v->is_object()) Wrong(key, "an object");
    return v && v->is_object() ? v : nullptr;
  }
  const Json* Array(const char* key) {
    const Json* v = Find(key);
    if (v && !v->is_array()) Wrong(key, "an array");
    return v && v->is_array() ? v : nullptr;
  }
  Status status() const { return error_.empty() ? Status::Ok() : Status(Error{error_}); }

 private:
  const Json* Find(const char* key) const {
    auto it = o_.find(key);
    return it == o_.end() || it->is_null() ? nullptr : &*it;
  }
  void Wrong(const char* key, const char* want) {
    if (error_.empty()) error_ = where_ + key + ": not " + want;
  }
  const Json& o_;
  std::string where_;
  std::string error_;
};

Json ContaminationToJson(const Contamination& c) {
  return {{"suite", c.suite}, {"task", c.task}, {"reason", c.reason}, {"score", c.score}};
}

}  // namespace

std::string RecordId(const KernelRecord& record) {
  KeyHasher key;
  if (record.kind == kKindQa) {
    key.Add("kind", record.kind);
    key.Add("question", record.qa.question);
    key.Add("answer", record.qa.answer);
    key.Add("citation", record.qa.citation);
  } else {
    key.Add("reference_sha256", record.task.reference_sha256);
    key.Add("candidate", record.candidate_source);
    key.Add("language", record.language);
    key.Add("format", record.format);
  }
  return key.Hex();
}

bool LicenceStated(const std::string& license) {
  std::string lower(Trim(license));
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.empty()) return false;
  for (const char* unstated : kUnstatedLicences)
    if (lower == unstated) return false;
  return true;
}

void FinishRecord(KernelRecord& record) {
  if (!record.task.reference_source.empty())
    record.task.reference_sha256 = Sha256Hex(record.task.reference_source);
  record.id = RecordId(record);
  // A record id is lower-case hex: a parent named in capitals is the same record.
  std::string& parent = record.provenance.parent_id;
  if (parent.size() == record.id.size() &&
      std::all_of(parent.begin(), parent.end(), [](unsigned char c) { return std::isxdigit(c); }))
    std::transform(parent.begin(), parent.end(), parent.begin(), [](unsigned char c) { return std::tolower(c); });
}

bool IsPassed(const VerificationResult& result) { return result.status == "passed"; }

bool Counts(const VerificationResult& result, bool count_claims) {
  return count_claims || result.origin == kOriginEngine;
}

const VerificationResult* BestResult(const KernelRecord& record, bool count_claims) {
  const VerificationResult* best = nullptr;
  for (const VerificationResult& r : record.results) {
    if (!Counts(r, count_claims)) continue;
    if (!best) {
      best = &r;
      continue;
    }
    if (IsPassed(r) != IsPassed(*best)) {
      if (IsPassed(r)) best = &r;
      continue;
    }
    if (r.speedup && (!best->speedup || *r.speedup > *best->speedup)) best = &r;
  }
  return best;
}

SpeedStat RecordSpeed(const KernelRecord& record, const std::string& hardware, bool count_claims) {
  std::vector<double> speeds;
  for (const VerificationResult& r : record.results)
    if (Counts(r, count_claims) && IsPassed(r) && r.speedup && std::isfinite(*r.speedup) &&
        (hardware.empty() || r.hardware == hardware))
      speeds.push_back(*r.speedup);
  SpeedStat stat;
  stat.samples = static_cast<int64_t>(speeds.size());
  if (speeds.empty()) return stat;
  std::sort(speeds.begin(), speeds.end());
  const size_t n = speeds.size();
  stat.median = n % 2 ? speeds[n / 2] : (speeds[n / 2 - 1] + speeds[n / 2]) / 2;
  return stat;
}

Json ResultToJson(const VerificationResult& r) {
  return {{"hardware", r.hardware},        {"toolchain", r.toolchain},
          {"backend", r.backend},          {"status", r.status},
          {"speedup", OptionalNumber(r.speedup)},
          {"reference_ms", OptionalNumber(r.reference_ms)},
          {"candidate_ms", OptionalNumber(r.candidate_ms)},
          {"environment", r.environment},  {"verified_at", r.verified_at},
          {"origin", r.origin},            {"claim", r.claim}};
}

Result<VerificationResult> ResultFromJson(const Json& json) {
  if (!json.is_object()) return Error{"result: not an object"};
  VerificationResult r;
  FieldReader f(json, "result.");
  f.Text("hardware", r.hardware);
  f.Text("toolchain", r.toolchain);
  f.Text("backend", r.backend);
  f.Text("status", r.status);
  f.OptionalNumber("speedup", r.speedup);
  f.OptionalNumber("reference_ms", r.reference_ms);
  f.OptionalNumber("candidate_ms", r.candidate_ms);
  if (const Json* env = f.Object("environment")) r.environment = *env;
  f.Text("verified_at", r.verified_at);
  f.Text("claim", r.claim);
  if (Status s = f.status(); !s) return Error{s.error()};
  r.origin = kOriginImport;  // a file cannot vouch for itself
  return r;
}

Json RecordToJson(const KernelRecord& r) {
  Json results = Json::array();
  for (const VerificationResult& v : r.results) results.push_back(ResultToJson(v));
  Json contamination = Json::array();
  for (const Contamination& c : r.contamination) contamination.push_back(ContaminationToJson(c));
  const Provenance& p = r.provenance;
  return {{"id", r.id},
          {"kind", r.kind},
          {"task",
           {{"name", r.task.name},
            {"reference_source", r.task.reference_source},
            {"reference_sha256", r.task.reference_sha256}}},
          {"candidate_source", r.candidate_source},
          {"language", r.language},
          {"format", r.format},
          {"arch", r.arch},
          {"qa", {{"question", r.qa.question}, {"answer", r.qa.answer}, {"citation", r.qa.citation}}},
          {"provenance",
           {{"pipeline", p.pipeline},
            {"model", p.model},
            {"prompt", p.prompt},
            {"parent_id", p.parent_id},
            {"source", p.source},
            {"license", p.license},
            {"origin_file", p.origin_file},
            {"origin_line", p.origin_line}}},
          {"results", results},
          {"duplicate_of", r.duplicate_of},
          {"duplicate_kind", r.duplicate_kind},
          {"contamination", contamination}};
}

Result<KernelRecord> RecordFromJson(const Json& json) {
  if (!json.is_object()) return Error{"record: not an object"};
  KernelRecord r;
  FieldReader f(json, "");
  f.Text("kind", r.kind);
  if (const Json* t = f.Object("task")) {
    FieldReader tf(*t, "task.");
    tf.Text("name", r.task.name);
    tf.Text("reference_source", r.task.reference_source);
    tf.Text("reference_sha256", r.task.reference_sha256);
    if (Status s = tf.status(); !s) return Error{s.error()};
  }
  f.Text("candidate_source", r.candidate_source);
  f.Text("language", r.language);
  f.Text("format", r.format);
  f.Text("arch", r.arch);
  if (const Json* q = f.Object("qa")) {
    FieldReader qf(*q, "qa.");
    qf.Text("question", r.qa.question);
    qf.Text("answer", r.qa.answer);
    qf.Text("citation", r.qa.citation);
    if (Status s = qf.status(); !s) return Error{s.error()};
  }
  if (const Json* p = f.Object("provenance")) {
    FieldReader pf(*p, "provenance.");
    Provenance& v = r.provenance;
    pf.Text("pipeline", v.pipeline);
    pf.Text("model", v.model);
    pf.Text("prompt", v.prompt);
    pf.Text("parent_id", v.parent_id);
    pf.Text("source", v.source);
    pf.Text("license", v.license);
    pf.Text("origin_file", v.origin_file);
    pf.Int("origin_line", v.origin_line);
    if (Status s = pf.status(); !s) return Error{s.error()};
  }
  if (const Json* results = f.Array("results")) {
    for (const Json& j : *results) {
      auto v = ResultFromJson(j);
      if (!v) return Error{v.error()};
      r.results.push_back(std::move(*v));
    }
  }
  f.Text("duplicate_of", r.duplicate_of);
  f.Text("duplicate_kind", r.duplicate_kind);
  if (const Json* marks = f.Array("contamination")) {
    for (const Json& j : *marks) {
      if (!j.is_object()) return Error{"contamination: not an object"};
      Contamination c;
      FieldReader cf(j, "contamination.");
      cf.Text("suite", c.suite);
      cf.Text("task", c.task);
      cf.Text("reason", c.reason);
      cf.Number("score", c.score);
      if (Status s = cf.status(); !s) return Error{s.error()};
      r.contamination.push_back(std::move(c));
    }
  }
  if (Status s = f.status(); !s) return Error{s.error()};
  if (r.kind != kKindKernel && r.kind != kKindQa) return Error{"kind: not \"kernel\" or \"qa\""};
  FinishRecord(r);
  return r;
}

}  // namespace kvault::corpus
