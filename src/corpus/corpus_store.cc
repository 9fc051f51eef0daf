#include "corpus/corpus_store.h"

#include <cmath>
#include <set>
#include <utility>

#include "corpus/corpus_schema.h"
#include "store/sqlite.h"
#include "store/timestamp.h"
#include "util/json_parse.h"

namespace kvault::corpus {
namespace {

// A record seen again (the same content) takes the new row's provenance where the row
// states it; a field the new row leaves empty keeps what the vault knew (a re-import
// without --license does not lose the licence). Where the row was read is the latest's.
constexpr const char* kUpsertRecordSql = R"sql(
INSERT INTO records (id, kind, task_name, reference_sha256, candidate_source, language, format,
                     arch, question, answer, citation, pipeline, model, prompt, parent_id, source,
                     license, origin_file, origin_line, duplicate_of, duplicate_kind)
VALUES (:id, :kind, :task_name, :reference_sha256, :candidate_source, :language, :format, :arch,
        :question, :answer, :citation, :pipeline, :model, :prompt, :parent_id, :source, :license,
        :origin_file, :origin_line, :duplicate_of, :duplicate_kind)
ON CONFLICT (id) DO UPDATE SET
  kind = excluded.kind, task_name = excluded.task_name,
  arch = CASE WHEN excluded.arch <> '' THEN excluded.arch ELSE arch END,
  pipeline = CASE WHEN excluded.pipeline <> '' THEN excluded.pipeline ELSE pipeline END,
  model = CASE WHEN excluded.model <> '' THEN excluded.model ELSE model END,
  prompt = CASE WHEN excluded.prompt <> '' THEN excluded.prompt ELSE prompt END,
  parent_id = CASE WHEN excluded.parent_id <> '' THEN excluded.parent_id ELSE parent_id END,
  source = CASE WHEN excluded.source <> '' THEN excluded.source ELSE source END,
  license = CASE WHEN excluded.license <> '' THEN excluded.license ELSE license END,
  origin_file = excluded.origin_file, origin_line = excluded.origin_line,
  duplicate_of = CASE WHEN excluded.duplicate_of <> '' THEN excluded.duplicate_of ELSE duplicate_of END,
  duplicate_kind = CASE WHEN excluded.duplicate_of <> '' THEN excluded.duplicate_kind ELSE duplicate_kind END
)sql";

constexpr const char* kPutReferenceSql =
    "INSERT INTO task_references (sha256, source) VALUES (:sha256, :source) "
    "ON CONFLICT (sha256) DO NOTHING";

constexpr const char* kPutResultSql = R"sql(
INSERT OR REPLACE INTO results (record_id, hardware, toolchain, backend, origin, claim, status,
                                speedup, reference_ms, candidate_ms, environment, verified_at)
VALUES (:record_id, :hardware, :toolchain, :backend, :origin, :claim, :status, :speedup,
        :reference_ms, :candidate_ms, :environment, :verified_at)
)sql";

constexpr const char* kResultsOfSql =
    "SELECT * FROM results WHERE record_id = :id "
    "ORDER BY verified_at, hardware, toolchain, backend, origin, claim";
constexpr const char* kMarksOfSql =
    "SELECT * FROM contamination WHERE record_id = :id ORDER BY suite, task, reason";
constexpr const char* kDropMarksOfSql = "DELETE FROM contamination WHERE record_id = :id";
constexpr const char* kPutMarkSql =
    "INSERT INTO contamination (record_id, suite, task, reason, score) "
    "VALUES (:record_id, :suite, :task, :reason, :score)";
constexpr const char* kHasResultSql =
    "SELECT count(*) AS n FROM results WHERE record_id = :id AND hardware = :hardware "
    "AND toolchain = :toolchain AND origin = 'engine'";

constexpr const char* kSelectRecordsSql =
    "SELECT r.*, coalesce(ref.source, '') AS reference_source FROM records r "
    "LEFT JOIN task_references ref ON ref.sha256 = r.reference_sha256";

// The WHERE clause of a filter; its parameters are bound by BindFilter.
std::string FilterSql(const RecordFilter& f) {
  std::string where = " WHERE 1";
  if (!f.status.empty() || !f.hardware.empty() || f.min_speedup) {
    where += " AND EXISTS (SELECT 1 FROM results x WHERE x.record_id = r.id";
    if (!f.status.empty()) where += " AND x.status = :status";
    if (!f.hardware.empty()) where += " AND x.hardware = :hardware";
    if (f.min_speedup) where += " AND x.speedup >= :min_speedup";
    if (!f.count_claims) where += " AND x.origin = 'engine'";
    where += ")";
  }
  if (!f.language.empty()) where += " AND r.language = :language";
  if (!f.kind.empty()) where += " AND r.kind = :kind";
  if (f.decontaminated_only)
    where += " AND NOT EXISTS (SELECT 1 FROM contamination c WHERE c.record_id = r.id)";
  if (!f.include_duplicates) where += " AND (r.duplicate_of = '' OR r.duplicate_kind = 'near_miss')";
  if (f.licensed_only) {  // LicenceStated, in SQL
    where += " AND lower(trim(r.license, char(32, 9, 10, 11, 12, 13))) NOT IN (''";
    for (const char* unstated : kUnstatedLicences) where += ", '" + std::string(unstated) + "'";
    where += ")";
  }
  return where;
}

void BindFilter(sqlite::Statement& s, const RecordFilter& f) {
  if (!f.status.empty()) s.Bind(":status", f.status);
  if (!f.hardware.empty()) s.Bind(":hardware", f.hardware);
  if (f.min_speedup) s.Bind(":min_speedup", *f.min_speedup);
  if (!f.language.empty()) s.Bind(":language", f.language);
  if (!f.kind.empty()) s.Bind(":kind", f.kind);
}

KernelRecord RecordFromRow(const sqlite::Statement& s) {
  KernelRecord r;
  r.id = s.Text("id");
  r.kind = s.Text("kind");
  r.task.name = s.Text("task_name");
  r.task.reference_sha256 = s.Text("reference_sha256");
  r.task.reference_source = s.Text("reference_source");
  r.candidate_source = s.Text("candidate_source");
  r.language = s.Text("language");
  r.format = s.Text("format");
  r.arch = s.Text("arch");
  r.qa = {s.Text("question"), s.Text("answer"), s.Text("citation")};
  Provenance& p = r.provenance;
  p.pipeline = s.Text("pipeline");
  p.model = s.Text("model");
  p.prompt = s.Text("prompt");
  p.parent_id = s.Text("parent_id");
  p.source = s.Text("source");
  p.license = s.Text("license");
  p.origin_file = s.Text("origin_file");
  p.origin_line = s.Int64("origin_line");
  r.duplicate_of = s.Text("duplicate_of");
  r.duplicate_kind = s.Text("duplicate_kind");
  return r;
}

VerificationResult ResultFromRow(const sqlite::Statement& s) {
  VerificationResult v;
  v.hardware = s.Text("hardware");
  v.toolchain = s.Text("toolchain");
  v.backend = s.Text("backend");
  v.status = s.Text("status");
  v.speedup = s.OptionalDouble("speedup");
  v.reference_ms = s.OptionalDouble("reference_ms");
  v.candidate_ms = s.OptionalDouble("candidate_ms");
  auto env = ParseJson(s.Text("environment"));
  v.environment = env ? *env : Json::object();
  v.verified_at = s.Text("verified_at");
  v.origin = s.Text("origin");
  v.claim = s.Text("claim");
  return v;
}

std::optional<double> Finite(const std::optional<double>& v) {
  if (v && std::isfinite(*v)) return v;
  return std::nullopt;
}

// Runs a statement that returns no rows, resetting it after.
Status Run(sqlite::Statement& s) {
  sqlite::ResetOnExit reset(s);
  auto step = s.Next();
  if (!step) return Error{step.error()};
  return Status::Ok();
}

}  // namespace

struct CorpusStore::Impl {
  sqlite::Connection db;  // first: destroyed after the statements
  sqlite::Statement upsert_record;
  sqlite::Statement put_reference;
  sqlite::Statement put_result;
  sqlite::Statement results_of;
  sqlite::Statement marks_of;
  sqlite::Statement drop_marks_of;
  sqlite::Statement put_mark;
  sqlite::Statement has_result;
};

CorpusStore::CorpusStore(std::string path, std::unique_ptr<Impl> impl)
    : path_(std::move(path)), impl_(std::move(impl)) {}
CorpusStore::CorpusStore(CorpusStore&&) noexcept = default;
CorpusStore& CorpusStore::operator=(CorpusStore&&) noexcept = default;
CorpusStore::~CorpusStore() = default;

Error CorpusStore::Fail(const std::string& what, const std::string& detail) const {
  return Error{"vault " + path_ + ": " + what + ": " + detail};
}

Result<CorpusStore> CorpusStore::Open(const std::filesystem::path& path) {
  const std::string p = path.string();
  auto db = OpenVaultFile(p, kBusyTimeoutMs);
  if (!db) return Error{db.error()};
  const char* sqls[] = {kUpsertRecordSql, kPutReferenceSql, kPutResultSql, kResultsOfSql,
                        kMarksOfSql,      kDropMarksOfSql,  kPutMarkSql,   kHasResultSql};
  std::vector<sqlite::Statement> stmts;
  for (const char* sql : sqls) {
    auto s = sqlite::Statement::Prepare(*db, sql);
    if (!s) return Error{"vault " + p + ": prepare: " + s.error()};
    stmts.push_back(std::move(*s));
  }
  auto impl = std::unique_ptr<Impl>(new Impl{std::move(*db), std::move(stmts[0]), std::move(stmts[1]),
                                             std::move(stmts[2]), std::move(stmts[3]),
                                             std::move(stmts[4]), std::move(stmts[5]),
                                             std::move(stmts[6]), std::move(stmts[7])});
  return CorpusStore(p, std::move(impl));
}

Status CorpusStore::Upsert(const KernelRecord& record) { return UpsertMany({record}); }

Status CorpusStore::UpsertMany(const std::vector<KernelRecord>& records) {
  Transaction txn(impl_->db);
  if (Status s = txn.Begin(); !s) return Fail("begin", s.error());
  for (const KernelRecord& r : records) {
    if (Status s = UpsertOne(r); !s) return Fail("upsert " + r.task.name, s.error());
  }
  if (Status s = txn.Commit(); !s) return Fail("commit", s.error());
  return Status::Ok();
}

Status CorpusStore::UpsertOne(const KernelRecord& in) {
  if (in.kind != kKindKernel && in.kind != kKindQa) return Error{"kind '" + in.kind + "' is not kernel or qa"};
  if (in.kind == kKindKernel && in.task.name.empty()) return Error{"a kernel record needs a task name"};
  if (in.kind == kKindQa && in.qa.question.empty()) return Error{"a qa record needs a question"};
  KernelRecord r = in;
  FinishRecord(r);
  if (r.provenance.parent_id == r.id) return Error{"provenance.parent_id names the record itself"};
  Impl& m = *impl_;
  if (!r.task.reference_source.empty()) {
    m.put_reference.Bind(":sha256", r.task.reference_sha256);
    m.put_reference.Bind(":source", r.task.reference_source);
    if (Status s = Run(m.put_reference); !s) return s;
  }
  sqlite::Statement& u = m.upsert_record;
  const Provenance& p = r.provenance;
  u.Bind(":id", r.id);
  u.Bind(":kind", r.kind);
  u.Bind(":task_name", r.task.name);
  u.Bind(":reference_sha256", r.task.reference_sha256);
  u.Bind(":candidate_source", r.candidate_source);
  u.Bind(":language", r.language);
  u.Bind(":format", r.format);
  u.Bind(":arch", r.arch);
  u.Bind(":question", r.qa.question);
  u.Bind(":answer", r.qa.answer);
  u.Bind(":citation", r.qa.citation);
  u.Bind(":pipeline", p.pipeline);
  u.Bind(":model", p.model);
  u.Bind(":prompt", p.prompt);
  u.Bind(":parent_id", p.parent_id);
  u.Bind(":source", p.source);
  u.Bind(":license", p.license);
  u.Bind(":origin_file", p.origin_file);
  u.Bind(":origin_line", p.origin_line);
  u.Bind(":duplicate_of", r.duplicate_of);
  u.Bind(":duplicate_kind", r.duplicate_of.empty() ? std::string() : r.duplicate_kind);
  if (Status s = Run(u); !s) return s;
  for (const VerificationResult& v : r.results) {
    if (Status s = AddResult(r.id, v); !s) return s;
  }
  if (r.contamination.empty()) return Status::Ok();
  m.drop_marks_of.Bind(":id", r.id);
  if (Status s = Run(m.drop_marks_of); !s) return s;
  for (const Contamination& c : r.contamination) {
    m.put_mark.Bind(":record_id", r.id);
    m.put_mark.Bind(":suite", c.suite);
    m.put_mark.Bind(":task", c.task);
    m.put_mark.Bind(":reason", c.reason);
    m.put_mark.Bind(":score", c.score);
    if (Status s = Run(m.put_mark); !s) return s;
  }
  return Status::Ok();
}

Status CorpusStore::AddResult(std::string_view record_id, const VerificationResult& v) {
  sqlite::Statement& s = impl_->put_result;
  s.Bind(":record_id", record_id);
  s.Bind(":hardware", v.hardware);
  s.Bind(":toolchain", v.toolchain);
  s.Bind(":backend", v.backend);
  const bool engine = v.origin == kOriginEngine;
  s.Bind(":origin", engine ? kOriginEngine : kOriginImport);
  s.Bind(":claim", engine ? std::string() : v.claim);
  s.Bind(":status", v.status);
  s.BindOptional(":speedup", Finite(v.speedup));
  s.BindOptional(":reference_ms", Finite(v.reference_ms));
  s.BindOptional(":candidate_ms", Finite(v.candidate_ms));
  s.Bind(":environment", DumpJson(v.environment));
  s.Bind(":verified_at", v.verified_at.empty() ? NowIso8601Utc() : v.verified_at);
  if (Status st = Run(s); !st) return Fail("add result", st.error());
  return Status::Ok();
}

Result<bool> CorpusStore::HasResult(std::string_view record_id, std::string_view hardware,
                                    std::string_view toolchain) {
  sqlite::Statement& s = impl_->has_result;
  sqlite::ResetOnExit reset(s);
  s.Bind(":id", record_id);
  s.Bind(":hardware", hardware);
  s.Bind(":toolchain", toolchain);
  auto step = s.Next();
  if (!step) return Fail("has result", step.error());
  return s.Int64("n") > 0;
}

Status CorpusStore::ReadDetails(KernelRecord& record) {
  Impl& m = *impl_;
  {
    sqlite::ResetOnExit reset(m.results_of);
    m.results_of.Bind(":id", record.id);
    for (;;) {
      auto step = m.results_of.Next();
      if (!step) return Error{step.error()};
      if (*step == sqlite::Step::kDone) break;
      record.results.push_back(ResultFromRow(m.results_of));
    }
  }
  sqlite::ResetOnExit reset(m.marks_of);
  m.marks_of.Bind(":id", record.id);
  for (;;) {
    auto step = m.marks_of.Next();
    if (!step) return Error{step.error()};
    if (*step == sqlite::Step::kDone) break;
    record.contamination.push_back({m.marks_of.Text("suite"), m.marks_of.Text("task"),
                                    m.marks_of.Text("reason"), m.marks_of.Double("score")});
  }
  return Status::Ok();
}

Status CorpusStore::ForEach(const RecordFilter& filter,
                            const std::function<bool(const KernelRecord&)>& visit) {
  auto stmt = sqlite::Statement::Prepare(impl_->db, std::string(kSelectRecordsSql) +
                                                        FilterSql(filter) + " ORDER BY r.seq");
  if (!stmt) return Fail("select", stmt.error());
  BindFilter(*stmt, filter);
  for (;;) {
    auto step = stmt->Next();
    if (!step) return Fail("select", step.error());
    if (*step == sqlite::Step::kDone) return Status::Ok();
    KernelRecord r = RecordFromRow(*stmt);
    if (Status s = ReadDetails(r); !s) return Fail("read " + r.id, s.error());
    if (!visit(r)) return Status::Ok();
  }
}

Status CorpusStore::ForEachTask(const std::function<void(const TaskRef&)>& visit) {
  auto stmt = sqlite::Statement::Prepare(
      impl_->db,
      "SELECT t.task_name, t.reference_sha256, coalesce(ref.source, '') AS reference_source "
      "FROM (SELECT DISTINCT task_name, reference_sha256 FROM records) t "
      "LEFT JOIN task_references ref ON ref.sha256 = t.reference_sha256 "
      "ORDER BY t.task_name, t.reference_sha256");
  if (!stmt) return Fail("tasks", stmt.error());
  for (;;) {
    auto step = stmt->Next();
    if (!step) return Fail("tasks", step.error());
    if (*step == sqlite::Step::kDone) return Status::Ok();
    visit({stmt->Text("task_name"), stmt->Text("reference_source"), stmt->Text("reference_sha256")});
  }
}

Result<int64_t> CorpusStore::Count(const RecordFilter& filter) {
  auto stmt = sqlite::Statement::Prepare(impl_->db,
                                         "SELECT count(*) AS n FROM records r" + FilterSql(filter));
  if (!stmt) return Fail("count", stmt.error());
  BindFilter(*stmt, filter);
  auto step = stmt->Next();
  if (!step) return Fail("count", step.error());
  return stmt->Int64("n");
}

Result<std::optional<KernelRecord>> CorpusStore::Get(std::string_view id) {
  auto stmt = sqlite::Statement::Prepare(impl_->db, std::string(kSelectRecordsSql) + " WHERE r.id = :id");
  if (!stmt) return Fail("get", stmt.error());
  stmt->Bind(":id", id);
  auto step = stmt->Next();
  if (!step) return Fail("get", step.error());
  if (*step == sqlite::Step::kDone) return std::optional<KernelRecord>();
  KernelRecord r = RecordFromRow(*stmt);
  if (Status s = ReadDetails(r); !s) return Fail("read " + r.id, s.error());
  return std::optional<KernelRecord>(std::move(r));
}

Status CorpusStore::SetDuplicates(const std::vector<DuplicateMark>& marks) {
  Transaction txn(impl_->db);
  if (Status s = txn.Begin(); !s) return Fail("begin", s.error());
  if (Status s = impl_->db.Exec("UPDATE records SET duplicate_of = '', duplicate_kind = ''"); !s)
    return Fail("clear duplicates", s.error());
  auto stmt = sqlite::Statement::Prepare(
      impl_->db, "UPDATE records SET duplicate_of = :of, duplicate_kind = :kind WHERE id = :id");
  if (!stmt) return Fail("set duplicates", stmt.error());
  for (const DuplicateMark& d : marks) {
    if (d.duplicate_of.empty() || d.duplicate_of == d.record_id)
      return Fail("set duplicates", "record " + d.record_id + " marked a duplicate of '" +
                                        d.duplicate_of + "'");
    stmt->Bind(":of", d.duplicate_of);
    stmt->Bind(":kind", d.kind);
    stmt->Bind(":id", d.record_id);
    if (Status s = Run(*stmt); !s) return Fail("set duplicates", s.error());
    if (sqlite3_changes(impl_->db.get()) != 1)
      return Fail("set duplicates", "no record " + d.record_id);
  }
  if (Status s = txn.Commit(); !s) return Fail("commit", s.error());
  return Status::Ok();
}

Status CorpusStore::SetContamination(const std::vector<ContaminationMark>& marks,
                                     std::string_view suite) {
  Transaction txn(impl_->db);
  if (Status s = txn.Begin(); !s) return Fail("begin", s.error());
  auto drop = sqlite::Statement::Prepare(impl_->db, "DELETE FROM contamination WHERE suite = :suite");
  if (!drop) return Fail("set contamination", drop.error());
  drop->Bind(":suite", suite);
  if (Status s = Run(*drop); !s) return Fail("set contamination", s.error());
  auto exists = sqlite::Statement::Prepare(impl_->db, "SELECT count(*) AS n FROM records WHERE id = :id");
  if (!exists) return Fail("set contamination", exists.error());
  sqlite::Statement& put = impl_->put_mark;
  for (const ContaminationMark& c : marks) {
    exists->Bind(":id", c.record_id);
    auto step = exists->Next();
    if (!step) return Fail("set contamination", step.error());
    const bool known = exists->Int64("n") > 0;
    exists->Reset();
    if (!known) return Fail("set contamination", "no record " + c.record_id);
    put.Bind(":record_id", c.record_id);
    put.Bind(":suite", suite);
    put.Bind(":task", c.task);
    put.Bind(":reason", c.reason);
    put.Bind(":score", c.score);
    if (Status s = Run(put); !s) return Fail("set contamination", s.error());
  }
  if (Status s = txn.Commit(); !s) return Fail("commit", s.error());
  return Status::Ok();
}

Result<std::vector<std::pair<std::string, int64_t>>> CorpusStore::ContaminationSummary() {
  auto stmt = sqlite::Statement::Prepare(
      impl_->db,
      "SELECT suite, count(DISTINCT record_id) AS n FROM contamination GROUP BY suite ORDER BY suite");
  if (!stmt) return Fail("contamination summary", stmt.error());
  std::vector<std::pair<std::string, int64_t>> out;
  for (;;) {
    auto step = stmt->Next();
    if (!step) return Fail("contamination summary", step.error());
    if (*step == sqlite::Step::kDone) return out;
    out.emplace_back(stmt->Text("suite"), stmt->Int64("n"));
  }
}

}  // namespace kvault::corpus
