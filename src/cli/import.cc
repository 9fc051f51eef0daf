// kvault import: attempts exported as JSON Lines (`kvault export`) into a store
// (docs/export.md, "Import"). How a cluster gathers the attempts its nodes recorded
// into the driver's store (docs/cluster.md): the store's own key makes a row
// imported twice one row. Imported rows are marked (origin "imported"): claims that
// `kvault serve` never answers a request with.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>

#include "cli/commands.h"
#include "export/rows.h"
#include "util/json_parse.h"

namespace kvault::cli {
namespace {

// Puts every line of `in` into `store`; the count, or an error naming the line.
// ack: after each row is in the store, "ok <line>" on stdout, flushed (a caller
// streaming rows through one process learns which are recorded).
Result<size_t> ImportLines(std::istream& in, const std::string& name, Store& store, bool ack) {
  size_t line_no = 0, count = 0;
  std::string line;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto where = [&] { return name + ":" + std::to_string(line_no) + ": "; };
    auto row = ParseJson(line);
    if (!row) return Error{where() + row.error()};
    auto record = exporting::AttemptFromRow(*row);
    if (!record) return Error{where() + record.error()};
    record->origin = "imported";  // a claim of another store: never answered as verified here
    if (Status s = store.Put(*record); !s) return Error{where() + s.error()};
    ++count;
    if (ack) std::cout << "ok " << line_no << std::endl;
  }
  if (in.bad()) return Error{name + ": read error"};
  return count;
}

// Why `input` cannot be read as rows, "" when it can be tried: checked for every input
// before any row is stored, so a typo in the last one imports none of the first ones.
std::string Unreadable(const std::string& input) {
  if (input == "-") return "";
  std::error_code ec;
  const auto status = std::filesystem::status(input, ec);
  if (!std::filesystem::exists(status)) return input + ": no such file";
  if (std::filesystem::is_directory(status)) return input + ": a folder, not a file of rows";
  std::ifstream in(input, std::ios::binary);
  if (!in) return "cannot read " + input;
  char magic[4] = {};
  if (in.read(magic, 4) && std::string_view(magic, 4) == "PAR1")
    return input + ": a Parquet file; kvault import reads the JSON Lines of `kvault export --format jsonl`";
  return "";
}

}  // namespace

int RunImport(const ImportFlags& flags) {
  for (const std::string& input : flags.inputs)
    if (std::string why = Unreadable(input); !why.empty()) {
      std::cerr << "kvault import: " << why << "\n";
      return kExitMisuse;
    }
  auto store = Store::Open(ResolveDbPath(flags.db));
  if (!store) {
    std::cerr << "kvault import: " << store.error() << "\n";
    return kExitInfra;
  }
  size_t total = 0;
  for (const std::string& input : flags.inputs) {
    std::ifstream file;
    if (input != "-") {
      file.open(input);
      if (!file) {
        std::cerr << "kvault import: cannot read " << input << "\n";
        return kExitMisuse;
      }
    }
    auto count = ImportLines(input == "-" ? std::cin : file, input == "-" ? "stdin" : input, **store,
                              flags.ack);
    if (!count) {
      std::cerr << "kvault import: " << count.error() << "\n";
      return kExitMisuse;
    }
    total += *count;
  }
  std::cerr << "kvault import: " << total << " attempt(s) into " << (*store)->path() << "\n";
  return kExitOk;
}

}  // namespace kvault::cli
