#include "export/writers.h"

#include <cstdio>

namespace kvault::exporting {
namespace {

std::string Field(const Json& v, ColumnType type) {
  if (v.is_null()) return "";
  if (type == ColumnType::kJson) return DumpJson(v);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump();  // numbers: shortest text that reads back the same
}

std::string Quoted(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

void WriteJsonl(std::ostream& out, const std::vector<Column>& columns, const std::vector<Json>& rows) {
  for (const Json& row : rows) {
    std::string line = "{";
    for (size_t i = 0; i < columns.size(); ++i) {
      const Json& v = row.contains(columns[i].name) ? row[columns[i].name] : Json(nullptr);
      line += (i ? "," : "") + Json(columns[i].name).dump() + ":" + DumpJson(v);
    }
    out << line << "}\n";
  }
}

void WriteCsv(std::ostream& out, const std::vector<Column>& columns, const std::vector<Json>& rows) {
  for (size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << Quoted(columns[i].name);
  out << "\r\n";
  for (const Json& row : rows) {
    for (size_t i = 0; i < columns.size(); ++i) {
      const Json& v = row.contains(columns[i].name) ? row[columns[i].name] : Json(nullptr);
      out << (i ? "," : "") << Quoted(Field(v, columns[i].type));
    }
    out << "\r\n";
  }
}

}  // namespace kvault::exporting
