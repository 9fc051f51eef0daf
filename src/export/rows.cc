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

Json ColumnsJson(const std::vector<Column>& columns) {
  Json out = Json::array();
  for (const Column& c : columns)
    out.push_back({{"name", c.name}, {"type", TypeName(c.type)}, {"nullable", c.nullable}});
  return out;
}

}  // namespace kvault::exporting
