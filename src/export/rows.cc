#include "export/rows.h"

namespace kvault::exporting {
namespace {

Json Opt(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

// A string field of the environment's device object ("" when absent).
std::string DeviceField(const Json& environment, const char* key) {
  if (!environment.is_object() || !environment.contains("device") || !environment["device"].is_object())
    return "";
  const Json& v = environment["device"].value(key, Json());
  return v.is_string() ? v.get<std::string>() : "";
}

std::string EnvString(const Json& environment, const char* key) {
  if (!environment.is_object()) return "";
  const Json& v = environment.value(key, Json());
  return v.is_string() ? v.get<std::string>() : "";
}

const char* TypeName(ColumnType t) {
  switch (t) {
    case ColumnType::kString: return "string";
    case ColumnType::kInt: return "int";
    case ColumnType::kDouble: return "double";
    case ColumnType::kBool: return "bool";
    case ColumnType::kJson: return "json";
  }
  return "string";
}

// The value of column `name` in `row`, checked against its type; nullptr for a
// null value of a nullable column.
Result<const Json*> Field(const Json& row, const Column& c) {
  if (!row.contains(c.name)) return Error{"the row has no column '" + c.name + "'"};
  const Json& v = row[c.name];
  if (v.is_null() && c.nullable) return static_cast<const Json*>(nullptr);
  bool ok = false;
  switch (c.type) {
    case ColumnType::kString: ok = v.is_string(); break;
    case ColumnType::kInt: ok = v.is_number_integer(); break;
    case ColumnType::kDouble: ok = v.is_number(); break;
    case ColumnType::kBool: ok = v.is_boolean(); break;
    case ColumnType::kJson: ok = true; break;
  }
  if (!ok) return Error{"column '" + c.name + "' is not a " + TypeName(c.type)};
  return &v;
}

}  // namespace

const std::vector<Column>& AttemptColumns() {
  using T = ColumnType;
  static const std::vector<Column> columns = {
      {"id", T::kInt},           {"run", T::kString},          {"task", T::kString},
      {"sample", T::kString},    {"task_hash", T::kString},    {"candidate_path", T::kString},
      {"candidate_hash", T::kString}, {"format", T::kString},  {"language", T::kString},
      {"backend", T::kString},   {"arch", T::kString},         {"device", T::kString},
      {"torch", T::kString},     {"model", T::kString},        {"policy", T::kString},
      {"status", T::kString},    {"compiled", T::kBool},       {"correct", T::kBool},
      {"speedup", T::kDouble, true}, {"reference_ms", T::kDouble, true},
      {"candidate_ms", T::kDouble, true}, {"reward", T::kDouble, true},
      {"message", T::kString},   {"diagnostics", T::kString},  {"seconds", T::kDouble},
      {"created_at", T::kString}, {"engine_version", T::kString},
      {"candidate_source", T::kString}, {"cases", T::kJson},   {"environment", T::kJson},
  };
  return columns;
}

Json AttemptRow(const AttemptRecord& r, const RunContext& context) {
  return Json{{"id", r.id},
              {"run", r.run},
              {"task", r.task},
              {"sample", r.sample},
              {"task_hash", r.task_hash},
              {"candidate_path", r.candidate_path},
              {"candidate_hash", r.candidate_hash},
              {"format", r.format},
              {"language", r.language},
              {"backend", r.backend},
              {"arch", r.arch},
              {"device", DeviceField(r.environment, "name")},
              {"torch", EnvString(r.environment, "torch")},
              {"model", context.model},
              {"policy", r.policy},
              {"status", r.status},
              {"compiled", r.compiled},
              {"correct", r.correct},
              {"speedup", Opt(r.speedup)},
              {"reference_ms", Opt(r.reference_ms)},
              {"candidate_ms", Opt(r.candidate_ms)},
              {"reward", Opt(r.reward)},
              {"message", r.message},
              {"diagnostics", r.diagnostics},
              {"seconds", r.seconds},
              {"created_at", r.created_at},
              {"engine_version", r.engine_version},
              {"candidate_source", r.candidate_source},
              {"cases", r.cases},
              {"environment", r.environment}};
}

Result<AttemptRecord> AttemptFromRow(const Json& row) {
  if (!row.is_object()) return Error{"a row is not a JSON object"};
  AttemptRecord r;
  for (const Column& c : AttemptColumns()) {
    auto field = Field(row, c);
    if (!field) return Error{field.error()};
    const Json* v = *field;
    const std::string& n = c.name;
    auto text = [&] { return v->get<std::string>(); };
    auto number = [&] { return v ? std::optional<double>(v->get<double>()) : std::nullopt; };
    if (n == "run") r.run = text();
    else if (n == "task") r.task = text();
    else if (n == "sample") r.sample = text();
    else if (n == "task_hash") r.task_hash = text();
    else if (n == "candidate_path") r.candidate_path = text();
    else if (n == "candidate_hash") r.candidate_hash = text();
    else if (n == "format") r.format = text();
    else if (n == "language") r.language = text();
    else if (n == "backend") r.backend = text();
    else if (n == "arch") r.arch = text();
    else if (n == "policy") r.policy = text();
    else if (n == "status") r.status = text();
    else if (n == "compiled") r.compiled = v->get<bool>();
    else if (n == "correct") r.correct = v->get<bool>();
    else if (n == "speedup") r.speedup = number();
    else if (n == "reference_ms") r.reference_ms = number();
    else if (n == "candidate_ms") r.candidate_ms = number();
    else if (n == "reward") r.reward = number();
    else if (n == "message") r.message = text();
    else if (n == "diagnostics") r.diagnostics = text();
    else if (n == "seconds") r.seconds = v->get<double>();
    else if (n == "created_at") r.created_at = text();
    else if (n == "engine_version") r.engine_version = text();
    else if (n == "candidate_source") r.candidate_source = text();
    else if (n == "cases") r.cases = *v;
    else if (n == "environment") r.environment = *v;
    // id, device, torch and model are derived or belong to the exporting store.
  }
  return r;
}

Json ColumnsJson(const std::vector<Column>& columns) {
  Json out = Json::array();
  for (const Column& c : columns)
    out.push_back({{"name", c.name}, {"type", TypeName(c.type)}, {"nullable", c.nullable}});
  return out;
}

}  // namespace kvault::exporting
