#pragma once
// QA mining (docs/corpus.md, "QA mining"): ask an LLM for question-answer pairs about
// each chunk of a library's sources, keep the grounded ones, store them as records of
// kind "qa".
//
//   QaMiner miner(client, checker, options);
//   Result<QaMineReport> r = miner.Run(chunks, progress, known_questions, sink);
//   if (!r) -> the server failed for good: what was stored stays, and the same
//              command continues from the progress file
//
// A pair is grounded when its cited lines lie inside the chunk, the answer names at
// least one key term (an identifier in backticks, a name with '_', a digit or an inner
// capital, a number) and every key term occurs in the cited lines, and the code it
// carries compiles where that can be checked (CodeChecker). Thread safety: a QaMiner
// is used by one thread.
#include <functional>
#include <memory>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "corpus/qa_chunk.h"
#include "corpus/record.h"
#include "llm/chat.h"
#include "util/result.h"

namespace kvault::corpus {

// One pair as the model proposed it (the answer format of QaSystemPrompt).
struct QaCandidate {
  std::string question, answer, code;
  int first_line = 0, last_line = 0;  // the cited lines
};

// The model's answer: a JSON object {"pairs": [{"question", "answer", "lines": [a, b],
// "code"?}]}, bare or in a ```json fence. Error when no such object can be read; pairs
// missing a field are skipped and counted in *malformed.
Result<std::vector<QaCandidate>> ParseQaAnswer(std::string_view content, int* malformed);

// Whether code in answers compiles. The real one runs `g++ -fsyntax-only`; tests use
// a fake.
struct CodeCheck {
  enum class Verdict { kNone, kCompiled, kFailed, kUnchecked } verdict = Verdict::kNone;
  std::string detail;  // why unchecked, or the first compiler error
};
class CodeChecker {
 public:
  virtual ~CodeChecker() = default;
  virtual CodeCheck Check(const std::string& code, const std::string& language) = 0;
};
// g++ -fsyntax-only -std=c++17 with a timeout, on the code as a translation unit and
// else inside a function body. C and C++ only (others: unchecked). Errors that only
// say a name or header of the library is missing make it unchecked, not failed.
std::unique_ptr<CodeChecker> MakeGxxChecker(int timeout_s = 20);
const char* CodeVerdictName(CodeCheck::Verdict v);  // none | compiled | failed | unchecked

struct Grounding {
  bool grounded = false;
  std::string reason;  // "grounded" or why not: lines_outside_chunk, no_key_terms,
                       // term_not_in_cited_lines (with the term), code_does_not_compile
  CodeCheck code;
};
Grounding CheckGrounding(const QaCandidate& pair, const SourceChunk& chunk, CodeChecker& checker);

// The key terms of an answer (see above), citations of lines ("line 12", "lines 3-5")
// left out.
std::vector<std::string> KeyTerms(std::string_view answer);

// Lower case, punctuation dropped, whitespace collapsed: equal for the same question.
std::string NormalizedQuestion(std::string_view question);

// The prompts of one chunk.
std::string QaSystemPrompt(int max_pairs);
std::string QaUserPrompt(const SourceChunk& chunk);

// Which chunks are done, kept in a JSON Lines file beside the vault so that a run
// stopped by a dead server continues where it stopped: {"chunk": id, "status":
// "done"|"unparseable", "kept": n}. Only "done" chunks are skipped.
class QaProgress {
 public:
  static Result<QaProgress> Open(const std::string& path);  // created when absent
  bool Done(const std::string& chunk_id) const { return done_.count(chunk_id) > 0; }
  Status Record(const std::string& chunk_id, const std::string& status, int kept);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::set<std::string> done_;
};

struct QaMineOptions {
  std::string model = "";
  std::string source = "";   // provenance: the source tree (path or URL)
  std::string license = "";  // provenance: the library's licence
  int max_pairs = 4;         // per chunk, asked for
  std::optional<double> temperature = std::nullopt;
  std::optional<int> max_tokens = std::nullopt;
};

struct QaMineReport {
  int chunks = 0, skipped_done = 0, asked = 0, unparseable = 0;
  int proposed = 0, malformed = 0, kept = 0, duplicates = 0;
  std::map<std::string, int> dropped;  // reason -> pairs
  std::map<std::string, int> code;     // code verdict -> kept pairs
  Json ToJson() const;
};

class QaMiner {
 public:
  // Stores one chunk's kept records (one transaction).
  using Sink = std::function<Status(const std::vector<KernelRecord>&)>;
  QaMiner(llm::ChatClient& client, CodeChecker& checker, QaMineOptions options)
      : client_(client), checker_(checker), options_(std::move(options)) {}
  // `known`: normalised questions already stored (updated as pairs are kept). On a
  // failed LLM call or store write, an Error naming the chunk; `*report` holds the
  // counts so far.
  Status Run(const std::vector<SourceChunk>& chunks, QaProgress& progress,
             std::set<std::string>& known, const Sink& sink, QaMineReport* report);

 private:
  Status MineChunk(const SourceChunk& chunk, QaProgress& progress, std::set<std::string>& known,
                   const Sink& sink, QaMineReport& report);
  KernelRecord MakeRecord(const QaCandidate& pair, const SourceChunk& chunk, const CodeCheck& code) const;

  llm::ChatClient& client_;
  CodeChecker& checker_;
  QaMineOptions options_;
};

}  // namespace kvault::corpus
