#pragma once
// What the importers of each format share (internal to src/corpus): the batch of
// records on its way to the vault and the report of rows left out.
#include <functional>
#include <string>
#include <vector>

#include "corpus/import.h"

namespace kvault::corpus {

class ImportSink {
 public:
  ImportSink(CorpusStore& vault, const ImportOptions& options) : vault_(vault), options_(options) {}

  // Stamps the options' source and licence (where given) and the origin, finishes the
  // record and queues it; writes a batch to the vault when it is full.
  Status Add(KernelRecord record, const std::string& file, int64_t line);
  // The same for a record that keeps the origin it carries (the vault's record JSON):
  // `file` and `line` name the row in reports only.
  Status AddKeepingOrigin(KernelRecord record, const std::string& file, int64_t line);
  void Malformed(const std::string& file, int64_t line, std::string why);
  void Skip(const std::string& file, int64_t line, std::string why);
  Status Flush();

  const ImportOptions& options() const { return options_; }
  ImportReport& report() { return report_; }

 private:
  static constexpr size_t kBatch = 2000;
  Status Queue(KernelRecord record, const std::string& file, int64_t line, bool stamp_origin);
  CorpusStore& vault_;
  const ImportOptions& options_;
  std::vector<KernelRecord> batch_;
  ImportReport report_;
};

// Language and format of a kernel source as the candidate loader sees it
// (src/candidate), from its content and an optional language hint ("hip", "triton").
// Sources the loader refuses (a HIP file without PYBIND11_MODULE) keep the hinted or
// guessed language and the format "source".
struct SourceKind {
  std::string language;
  std::string format;
};
SourceKind DetectSourceKind(const std::string& source, const std::string& language_hint);

// The code of the first fenced block tagged with one of `tags` (lower case), or of the
// first block at all when `tags` is empty; "" when there is none.
std::string FencedBlock(std::string_view text, const std::vector<std::string>& tags);

// Per format (import_*.cc). Each reads `path`, adds records and reports rows.
Status ImportRecordsFile(const std::string& path, ImportSink& sink);
Status ImportSftFile(const std::string& path, ImportSink& sink);
Status ImportVerlFile(const std::string& path, ImportSink& sink);
Status ImportAigV01Tree(const std::string& path, ImportSink& sink);
Status ImportAigV02File(const std::string& path, ImportSink& sink);
Status ImportKernelBenchFolder(const std::string& path, ImportSink& sink);
Status ImportStoreFile(const std::string& path, ImportSink& sink);
Status ImportGeakFolder(const std::string& path, ImportSink& sink);

}  // namespace kvault::corpus

namespace kvault::corpus {

// Calls `row` with each non-blank line of a JSON Lines file that parses as a JSON
// object, and its 1-based line number; other lines are reported malformed.
Status ForEachJsonLine(const std::string& path, ImportSink& sink,
                       const std::function<Status(const Json&, int64_t)>& row);

// A string field of `o` ("" when absent or not a string).
std::string TextField(const Json& o, const char* key);

}  // namespace kvault::corpus
