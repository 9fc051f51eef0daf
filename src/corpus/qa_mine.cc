#include "corpus/qa_mine.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>

#include "llm/code_fences.h"
#include "util/files.h"
#include "util/json_parse.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace kvault::corpus {
namespace {

constexpr size_t kMaxAnswerBytes = 1 << 20;  // a longer answer is not parsed

// The JSON object of an answer: the whole text, else a ```json block, else the span
// from the first '{' to the last '}'.
Result<Json> AnswerObject(std::string_view content) {
  if (content.size() > kMaxAnswerBytes) return Error{"answer longer than 1 MiB"};
  if (auto whole = ParseJson(content); whole && whole->is_object()) return *whole;
  for (const auto& block : llm::ScanFences(content).blocks)
    if (auto j = ParseJson(block.code); j && j->is_object()) return *j;
  size_t open = content.find('{'), close = content.rfind('}');
  if (open != std::string_view::npos && close != std::string_view::npos && open < close)
    if (auto j = ParseJson(content.substr(open, close - open + 1)); j && j->is_object()) return *j;
  return Error{"answer holds no JSON object"};
}

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A word that names code rather than prose: has '_', a digit or a capital after the
// first letter.
bool LooksLikeCode(std::string_view w) {
  if (w.size() < 2 || std::isdigit(static_cast<unsigned char>(w[0]))) return false;
  for (size_t i = 0; i < w.size(); ++i)
    if (w[i] == '_' || std::isdigit(static_cast<unsigned char>(w[i])) ||
        (i > 0 && std::isupper(static_cast<unsigned char>(w[i]))))
      return true;
  return false;
}

bool ContainsWord(const std::string& text, const std::string& word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    bool left = at == 0 || !IsIdentChar(text[at - 1]);
    bool right = at + word.size() >= text.size() || !IsIdentChar(text[at + word.size()]);
    if (left && right) return true;
  }
  return false;
}

class GxxChecker : public CodeChecker {
 public:
  explicit GxxChecker(int timeout_s) : timeout_s_(timeout_s) {}

  CodeCheck Check(const std::string& code, const std::string& language) override {
    if (code.empty()) return {};
    if (language != "c" && language != "cpp")
      return {CodeCheck::Verdict::kUnchecked, "no syntax check for " + language};
    auto dir = TempDir::Create("", "kvault-qa-code");
    if (!dir) return {CodeCheck::Verdict::kUnchecked, dir.error()};
    CodeCheck as_unit = Compile(*dir, code);
    if (as_unit.verdict != CodeCheck::Verdict::kFailed) return as_unit;
    CodeCheck as_body = Compile(*dir, "void kvault_snippet() {\n" + code + "\n}\n");
    return as_body.verdict == CodeCheck::Verdict::kFailed ? as_unit : as_body;
  }

 private:
  CodeCheck Compile(const TempDir& dir, const std::string& code) {
    std::string path = dir.Join("snippet.cc");
    if (Status s = WriteFileAtomic(path, code); !s) return {CodeCheck::Verdict::kUnchecked, s.error()};
    CommandSpec cmd;
    cmd.argv = {"g++", "-fsyntax-only", "-std=c++17", "-x", "c++", path};
    auto r = RunCommand(cmd, std::chrono::seconds(timeout_s_), 64 * 1024);
    if (!r) return {CodeCheck::Verdict::kUnchecked, "g++ not runnable: " + r.error()};
    if (r->timed_out) return {CodeCheck::Verdict::kUnchecked, "g++ timed out"};
    if (r->exit_code == 0) return {CodeCheck::Verdict::kCompiled, ""};
    return Classify(r->output);
  }

  // Errors about names or headers the snippet does not declare mean it needs the
  // library's context: unchecked. Any other error: failed.
  static CodeCheck Classify(const std::string& output) {
    if (!FitsRegex(output)) return {CodeCheck::Verdict::kUnchecked, "the compiler's output has lines too long to read"};
    static const std::regex kError(R"(error: (.*))");
    static const std::regex kContext(
        R"(No such file or directory|was not declared|does not name a type|has not been declared|is not a member of|incomplete type|undeclared|unknown type name)");
    std::string first;
    bool only_context = true;
    for (std::sregex_iterator it(output.begin(), output.end(), kError), end; it != end; ++it) {
      std::string msg = (*it)[1];
      if (first.empty()) first = msg;
      if (!std::regex_search(msg, kContext)) only_context = false;
    }
    if (first.empty()) return {CodeCheck::Verdict::kFailed, Truncate(output, 512)};
    if (only_context) return {CodeCheck::Verdict::kUnchecked, "needs the library's declarations: " + first};
    return {CodeCheck::Verdict::kFailed, first};
  }

  int timeout_s_;
};

}  // namespace

Result<std::vector<QaCandidate>> ParseQaAnswer(std::string_view content, int* malformed) {
  *malformed = 0;
  auto object = AnswerObject(content);
  if (!object) return Error{object.error()};
  auto pairs = object->find("pairs");
  if (pairs == object->end() || !pairs->is_array()) return Error{"answer's JSON has no \"pairs\" array"};
  std::vector<QaCandidate> out;
  for (const Json& p : *pairs) {
    const Json* lines = p.is_object() && p.contains("lines") ? &p["lines"] : nullptr;
    bool ok = p.is_object() && p.value("question", Json()).is_string() && p.value("answer", Json()).is_string() &&
              lines && lines->is_array() && lines->size() == 2 && (*lines)[0].is_number_integer() &&
              (*lines)[1].is_number_integer() && (!p.contains("code") || p["code"].is_string() || p["code"].is_null());
    if (!ok) { ++*malformed; continue; }
    QaCandidate c;
    c.question = p["question"].get<std::string>();
    c.answer = p["answer"].get<std::string>();
    if (p.contains("code") && p["code"].is_string()) c.code = p["code"].get<std::string>();
    c.first_line = (*lines)[0].get<int>();
    c.last_line = (*lines)[1].get<int>();
    if (Trim(c.question).empty() || Trim(c.answer).empty()) { ++*malformed; continue; }
    out.push_back(std::move(c));
  }
  return out;
}

std::unique_ptr<CodeChecker> MakeGxxChecker(int timeout_s) { return std::make_unique<GxxChecker>(timeout_s); }

const char* CodeVerdictName(CodeCheck::Verdict v) {
  switch (v) {
    case CodeCheck::Verdict::kNone: return "none";
    case CodeCheck::Verdict::kCompiled: return "compiled";
    case CodeCheck::Verdict::kFailed: return "failed";
    case CodeCheck::Verdict::kUnchecked: return "unchecked";
  }
  return "none";
}

std::vector<std::string> KeyTerms(std::string_view answer) {
  if (!FitsRegex(answer)) return {};  // a model's text past what std::regex can match: none grounded
  static const std::regex kLineRef(R"(\blines?\s+\d+(\s*(-|–|to|and)\s*\d+)?)", std::regex::icase);
  std::string text = std::regex_replace(std::string(answer), kLineRef, " ");
  std::set<std::string> terms;
  // identifiers in backticks
  for (size_t open = text.find('`'); open != std::string::npos;) {
    size_t close = text.find('`', open + 1);
    if (close == std::string::npos) break;
    std::string span = text.substr(open + 1, close - open - 1);
    static const std::regex kIdent(R"([A-Za-z_][A-Za-z0-9_]*)");
    for (std::sregex_iterator it(span.begin(), span.end(), kIdent), end; it != end; ++it)
      if (it->str().size() > 1) terms.insert(it->str());
    open = text.find('`', close + 1);
  }
  // code-like words and numbers in the prose
  static const std::regex kWord(R"([A-Za-z_][A-Za-z0-9_]*|\d+(\.\d+)?)");
  for (std::sregex_iterator it(text.begin(), text.end(), kWord), end; it != end; ++it) {
    std::string w = it->str();
    if (LooksLikeCode(w) || std::isdigit(static_cast<unsigned char>(w[0]))) terms.insert(w);
  }
  return {terms.begin(), terms.end()};
}

Grounding CheckGrounding(const QaCandidate& pair, const SourceChunk& chunk, CodeChecker& checker) {
  Grounding g;
  if (pair.first_line < chunk.first_line || pair.last_line > chunk.last_line ||
      pair.first_line > pair.last_line) {
    g.reason = "lines_outside_chunk";
    return g;
  }
  std::vector<std::string> terms = KeyTerms(pair.answer);
  if (terms.empty()) {
    g.reason = "no_key_terms";
    return g;
  }
  std::string cited = chunk.Lines(pair.first_line, pair.last_line);
  for (const std::string& t : terms) {
    if (!ContainsWord(cited, t)) {
      g.reason = "term_not_in_cited_lines";
      return g;
    }
  }
  g.code = checker.Check(pair.code, chunk.language);
  if (g.code.verdict == CodeCheck::Verdict::kFailed) {
    g.reason = "code_does_not_compile";
    return g;
  }
  g.grounded = true;
  g.reason = "grounded";
  return g;
}

std::string NormalizedQuestion(std::string_view question) {
  std::string out;
  for (char c : question) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '_' || u >= 0x80) out += static_cast<char>(std::tolower(u));
    else if (!out.empty() && out.back() != ' ') out += ' ';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string QaSystemPrompt(int max_pairs) {
  return "You write question-answer pairs that teach how a GPU library is implemented. You are "
         "given one chunk of a source file with its line numbers. Write at most " +
         std::to_string(max_pairs) +
         " pairs about what this chunk does. Every answer must be supported by the lines it "
         "cites: name the functions, variables and constants as they are spelled in the code "
         "(in backticks), and cite the smallest line range that shows them. Reply with one JSON "
         "object and nothing else:\n"
         "{\"pairs\": [{\"question\": \"...\", \"answer\": \"...\", \"lines\": [first, last], "
         "\"code\": \"optional C/C++ snippet or omitted\"}]}";
}

std::string QaUserPrompt(const SourceChunk& chunk) {
  std::string out = "File: " + chunk.file + " (lines " + std::to_string(chunk.first_line) + "-" +
                    std::to_string(chunk.last_line) + ")\n\n";
  int line = chunk.first_line;
  size_t start = 0;
  while (start < chunk.text.size()) {
    size_t end = chunk.text.find('\n', start);
    if (end == std::string::npos) end = chunk.text.size();
    out += std::to_string(line++) + ": " + chunk.text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

Result<QaProgress> QaProgress::Open(const std::string& path) {
  QaProgress p;
  p.path_ = path;
  if (!FileExists(path)) return p;
  auto text = ReadFile(path);
  if (!text) return Error{"cannot read progress file " + path + ": " + text.error()};
  int line_no = 0;
  for (const std::string& line : Split(*text, '\n')) {
    ++line_no;
    if (Trim(line).empty()) continue;
    auto j = ParseJson(line);
    // A line cut short by a crash is the last one: that chunk is simply asked again.
    if (!j || !j->is_object() || !(*j)["chunk"].is_string()) continue;
    if (j->value("status", "") == "done") p.done_.insert((*j)["chunk"].get<std::string>());
  }
  return p;
}

Status QaProgress::Record(const std::string& chunk_id, const std::string& status, int kept) {
  std::ofstream out(path_, std::ios::app);
  out << DumpJson(Json{{"chunk", chunk_id}, {"status", status}, {"kept", kept}}) << "\n";
  out.flush();
  if (!out) return Error{"cannot append to progress file " + path_};
  if (status == "done") done_.insert(chunk_id);
  return {};
}

Json QaMineReport::ToJson() const {
  return Json{{"chunks", chunks},         {"skipped_done", skipped_done}, {"asked", asked},
              {"unparseable", unparseable}, {"proposed", proposed},     {"malformed", malformed},
              {"kept", kept},             {"duplicates", duplicates},     {"dropped", dropped},
              {"code", code}};
}

Status QaMiner::Run(const std::vector<SourceChunk>& chunks, QaProgress& progress,
                    std::set<std::string>& known, const Sink& sink, QaMineReport* report) {
  report->chunks = static_cast<int>(chunks.size());
  for (const SourceChunk& chunk : chunks) {
    if (progress.Done(chunk.id)) {
      ++report->skipped_done;
      continue;
    }
    if (Status s = MineChunk(chunk, progress, known, sink, *report); !s) return s;
  }
  return {};
}

Status QaMiner::MineChunk(const SourceChunk& chunk, QaProgress& progress, std::set<std::string>& known,
                          const Sink& sink, QaMineReport& report) {
  llm::ChatRequest request{.model = options_.model,
                           .messages = {{"system", QaSystemPrompt(options_.max_pairs)},
                                        {"user", QaUserPrompt(chunk)}},
                           .temperature = options_.temperature,
                           .max_tokens = options_.max_tokens,
                           .seed = std::nullopt};
  ++report.asked;
  auto response = client_.Complete(request);
  if (!response) return Error{"LLM call for " + chunk.Citation() + " failed: " + response.error()};
  int malformed = 0;
  auto pairs = ParseQaAnswer(response->content, &malformed);
  if (!pairs) {
    ++report.unparseable;
    return progress.Record(chunk.id, "unparseable", 0);
  }
  report.malformed += malformed;
  report.proposed += static_cast<int>(pairs->size()) + malformed;
  std::vector<KernelRecord> kept;
  for (const QaCandidate& pair : *pairs) {
    Grounding g = CheckGrounding(pair, chunk, checker_);
    if (!g.grounded) {
      ++report.dropped[g.reason];
      continue;
    }
    if (!known.insert(NormalizedQuestion(pair.question)).second) {
      ++report.duplicates;
      continue;
    }
    ++report.code[CodeVerdictName(g.code.verdict)];
    kept.push_back(MakeRecord(pair, chunk, g.code));
  }
  if (!kept.empty())
    if (Status s = sink(kept); !s) return Error{"storing pairs of " + chunk.Citation() + ": " + s.error()};
  report.kept += static_cast<int>(kept.size());
  return progress.Record(chunk.id, "done", static_cast<int>(kept.size()));
}

KernelRecord QaMiner::MakeRecord(const QaCandidate& pair, const SourceChunk& chunk,
                                 const CodeCheck& code) const {
  KernelRecord r;
  r.kind = kKindQa;
  r.qa.question = pair.question;
  r.qa.answer = pair.answer;
  r.qa.citation = chunk.file + ":" + std::to_string(pair.first_line) + "-" + std::to_string(pair.last_line);
  r.candidate_source = pair.code;
  r.language = chunk.language;
  r.task.name = chunk.file;
  r.provenance.pipeline = "qa-mine";
  r.provenance.model = options_.model;
  r.provenance.source = options_.source;
  r.provenance.license = options_.license;
  r.provenance.origin_file = chunk.file;
  r.provenance.origin_line = pair.first_line;
  if (code.verdict != CodeCheck::Verdict::kNone) {
    VerificationResult check;
    check.hardware = "host";
    check.toolchain = "g++ -fsyntax-only";
    check.backend = "cpu";
    check.status = CodeVerdictName(code.verdict);
    if (!code.detail.empty()) check.environment = Json{{"detail", code.detail}};
    r.results.push_back(check);
  }
  FinishRecord(r);
  return r;
}

}  // namespace kvault::corpus
