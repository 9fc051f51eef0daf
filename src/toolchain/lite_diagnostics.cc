#include "toolchain/lite_diagnostics.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <regex>
#include <set>
#include <unordered_set>

#include "util/strings.h"

namespace kvault {
namespace {

// The kinds of error a source makes whatever the headers declare.
enum class Kind {
  kSyntax,         // the grammar or the characters; macro-like names on its line are checked
  kUndeclared,     // a name nothing declared: own unless PyTorch's headers hold it
  kRedeclared,     // a name the source declares twice
  kTypeMismatch,   // const, pointer and conversion errors on a line of builtin types only
  kBuiltinMember,  // a member CUDA's built-in vector types lack (blockIdx.w)
  kHostLaunch,     // <<<...>>> on a host function: the lite headers, as PyTorch's, declare no kernel
};

struct Pattern {
  const char* regex;  // over the message after "error: ", g++'s quotes made ASCII
  Kind kind;          // capture 1, when there is one: the name, or the first type
};

// g++ 12 and nvcc 13 messages, as they print them. Anything else is a doubt: the
// table lists what the source alone can cause, never what a missing declaration can
// (no member, incomplete type, no matching overload, ambiguity, ...).
const Pattern kPatterns[] = {
    // g++
    {R"re(^expected ('[^']*'|primary-expression|unqualified-id|initializer|declaration|statement|identifier)( or '[^']*')*( before .*| after .*| at end of input)?$)re",
     Kind::kSyntax},
    {R"re(^missing terminating ['"] character$)re", Kind::kSyntax},
    {R"re(^stray '.*' in program$)re", Kind::kSyntax},
    {R"re(^unterminated comment$)re", Kind::kSyntax},
    {R"re(^'([A-Za-z_]\w*)' was not declared in this scope(; did you mean '[^']*'\?)?$)re", Kind::kUndeclared},
    {R"re(^'([A-Za-z_]\w*)' does not name a type(; did you mean '[^']*'\?)?$)re", Kind::kUndeclared},
    {R"re(^'([A-Za-z_]\w*)' has not been declared$)re", Kind::kUndeclared},
    {R"re(^redeclaration of '[^']*\b([A-Za-z_]\w*)'$)re", Kind::kRedeclared},
    {R"re(^conflicting declaration '[^']*\b([A-Za-z_]\w*)'$)re", Kind::kRedeclared},
    {R"re(^assignment of read-only (location|variable) '.*'$)re", Kind::kTypeMismatch},
    {R"re(^(increment|decrement) of read-only (location|variable) '.*'$)re", Kind::kTypeMismatch},
    {R"re(^cannot convert '([^']*)' to '([^']*)' in (initialization|assignment)$)re", Kind::kTypeMismatch},
    {R"re(^invalid conversion from '([^']*)' to '([^']*)' \[-fpermissive\]$)re", Kind::kTypeMismatch},
    {R"re(^lvalue required as left operand of assignment$)re", Kind::kTypeMismatch},
    {R"re(^'(?:const )?(?:struct )?(u?int[234]|u?char[234]|u?short[234]|u?long[234]|u?longlong[234]|float[234]|double[234]|dim3)' has no member named '\w+'$)re",
     Kind::kBuiltinMember},
    // nvcc (its front end; host-side errors come from g++ as above)
    {R"re(^expected an? (expression|identifier|declaration|statement|"[^"]+")$)re", Kind::kSyntax},
    {R"re(^missing closing quote$)re", Kind::kSyntax},
    {R"re(^unrecognized token$)re", Kind::kSyntax},
    {R"re(^__host__ or __device__ annotation on lambda requires --extended-lambda nvcc flag$)re", Kind::kSyntax},
    {R"re(^identifier "([A-Za-z_]\w*)" is undefined$)re", Kind::kUndeclared},
    {R"re(^"([A-Za-z_]\w*)" has already been declared in the current scope$)re", Kind::kRedeclared},
    {R"re(^expression must be a modifiable lvalue$)re", Kind::kTypeMismatch},
    {R"re(^a value of type "([^"]*)" cannot be (used to initialize|assigned to) an entity of type "([^"]*)"$)re",
     Kind::kTypeMismatch},
    {R"re(^class "(u?int[234]|u?char[234]|u?short[234]|u?long[234]|u?longlong[234]|float[234]|double[234]|dim3)" has no member "\w+"$)re",
     Kind::kBuiltinMember},
    {R"re(^a host function call cannot be configured$)re", Kind::kHostLaunch},
};

// Words a line of builtin types may hold besides its own variables.
const std::unordered_set<std::string_view> kPlainWords = {
    "if", "else", "for", "while", "do", "return", "break", "continue", "const", "volatile", "static",
    "inline", "sizeof", "true", "false", "nullptr", "void", "bool", "char", "short", "int", "long",
    "float", "double", "signed", "unsigned", "size_t", "int8_t", "int16_t", "int32_t", "int64_t",
    "uint8_t", "uint16_t", "uint32_t", "uint64_t", "threadIdx", "blockIdx", "blockDim", "gridDim",
    "warpSize"};

// Builtin types a declaration may name (and quoted types may consist of).
bool IsBuiltinType(std::string_view w) {
  static const std::unordered_set<std::string_view> kTypes = {
      "const", "volatile", "static", "void", "bool", "char", "short", "int", "long", "float", "double",
      "signed", "unsigned", "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
      "uint32_t", "uint64_t", "__restrict__"};
  static const std::regex kVector(R"re(u?(char|short|int|long|longlong)[1234]|(float|double)[1234]|dim3)re");
  return kTypes.contains(w) || std::regex_match(std::string(w), kVector);
}

// Standard and CUDA macros the candidate's own headers define in both builds.
const std::unordered_set<std::string_view> kStandardMacros = {
    "NULL", "INFINITY", "NAN", "FLT_MAX", "FLT_MIN", "FLT_EPSILON", "DBL_MAX", "DBL_MIN", "INT_MAX",
    "INT_MIN", "UINT_MAX", "LLONG_MAX", "LLONG_MIN", "M_PI", "EOF", "HUGE_VALF", "CUDART_INF_F"};

// A located diagnostic line: "path:12:5: error: msg" (g++) or "path(12): error: msg" (nvcc).
struct Located {
  std::string path;
  int line = 0;
  std::string kind;  // "error", "fatal error", "catastrophic error", "note", "warning", ...
  std::string message;
};

std::optional<Located> ParseLocated(const std::string& text) {
  static const std::regex kGxx(R"re(^(.+?):(\d+):(?:\d+:)? (fatal error|error|warning|note): (.*)$)re");
  static const std::regex kNvcc(R"re(^(.+?)\((\d+)\): (catastrophic error|error|warning|note|remark)(?: #\w+(?:-D)?)?: (.*)$)re");
  std::smatch m;
  if (!std::regex_match(text, m, kNvcc) && !std::regex_match(text, m, kGxx)) return std::nullopt;
  return Located{m[1], std::stoi(m[2]), m[3], m[4]};
}

// g++ prints ‘’ around names under a UTF-8 locale, '' otherwise.
std::string AsciiQuotes(std::string_view s) {
  std::string out(s);
  for (const char* q : {"\xe2\x80\x98", "\xe2\x80\x99"})
    for (size_t at; (at = out.find(q)) != std::string::npos;) out.replace(at, 3, "'");
  return out;
}

std::vector<std::string> Identifiers(std::string_view text, bool skip_members) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"' || c == '\'') {  // a literal's text names nothing
      const size_t end = text.find(c, i + 1);
      i = end == std::string_view::npos ? text.size() : end + 1;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
      const bool member = i > 0 && (text[i - 1] == '.' || (i > 1 && text.substr(i - 2, 2) == "->"));
      if (!(skip_members && member)) out.emplace_back(text.substr(i, j - i));
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {  // a number with its suffix
      while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    } else {
      ++i;
    }
  }
  return out;
}

// The most characters between a declaration's type word and its name that are read.
constexpr size_t kDeclarationChars = 256;

class Source {
 public:
  explicit Source(std::string_view text) : lines_(Split(text, '\n')), text_(text) {}

  std::string_view Line(int n) const {
    return n >= 1 && n <= static_cast<int>(lines_.size()) ? std::string_view(lines_[n - 1]) : "";
  }
  // Line `n` and the last non-blank line before it: a missing token is reported at
  // the next one.
  std::string Around(int n) const {
    int prev = n - 1;
    while (prev >= 1 && Trim(Line(prev)).empty()) --prev;
    return std::string(Line(prev)) + "\n" + std::string(Line(n));
  }
  // The type words of each declaration-looking occurrence of `name` ("int n = ",
  // "const float* __restrict__ out,", "float acc;"): the word before it; with
  // `before_line`, only the last one that starts on or before that line (the one in
  // scope there: models name a kernel's pointer and the host's tensor alike).
  std::vector<std::string> DeclaredTypes(const std::string& name, int before_line = 0) const {
    static const std::set<std::string> kNotTypes = {"return", "else", "case", "goto", "new", "delete",
                                                    "throw", "sizeof", "typename", "using", "do"};
    // The words before `name`, matched in the kDeclarationChars before it: a std::regex
    // over the whole source recursed through every line of a run of `const` lines.
    static const std::regex kTypeBefore(R"re(\b([A-Za-z_]\w*)\s*[*&]*\s*(?:(?:const|__restrict__)\s*[*&]*\s*)*$)re");
    auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    std::vector<std::string> types;
    for (size_t at = text_.find(name); at != std::string::npos; at = text_.find(name, at + 1)) {
      if (at > 0 && word_char(text_[at - 1])) continue;
      size_t after = at + name.size();
      while (after < text_.size() && std::isspace(static_cast<unsigned char>(text_[after]))) ++after;
      if (after == text_.size() || std::string_view("=;,[){:").find(text_[after]) == std::string_view::npos) continue;
      const size_t from = at > kDeclarationChars ? at - kDeclarationChars : 0;
      const std::string before = text_.substr(from, at - from);
      std::smatch m;
      if (!std::regex_search(before, m, kTypeBefore) || kNotTypes.contains(m[1])) continue;
      if (before_line > 0) {
        const auto line = 1 + std::count(text_.begin(), text_.begin() + from + m.position(0), '\n');
        if (line > before_line) break;
        types.clear();
      }
      types.push_back(m[1]);
    }
    return types;
  }
  bool Defines(const std::string& name) const {
    return std::regex_search(text_, std::regex(R"re(#\s*define\s+)re" + name + R"re(\b)re"));
  }

 private:
  std::vector<std::string> lines_;
  std::string text_;
};

// Every name on the line is a builtin word or a variable the source declares with a
// builtin type: a type error there cannot involve PyTorch's types.
std::string NonBuiltinName(const Source& src, int line) {
  for (const std::string& word : Identifiers(src.Line(line), /*skip_members=*/true)) {
    if (kPlainWords.contains(word) || StartsWith(word, "__")) continue;
    const std::vector<std::string> types = src.DeclaredTypes(word, line);
    if (types.empty() || !std::all_of(types.begin(), types.end(), [](const std::string& t) { return IsBuiltinType(t); }))
      return word;
  }
  return "";
}

bool BuiltinTypeText(const std::string& quoted) {
  for (const std::string& word : Identifiers(quoted, false))
    if (!IsBuiltinType(word)) return false;
  return true;
}

// CUDA's and the compilers' own words of the __name__ form, the same in both builds.
const std::unordered_set<std::string_view> kCompilerWords = {
    "__global__", "__device__", "__host__", "__shared__", "__constant__", "__managed__", "__restrict__",
    "__forceinline__", "__noinline__", "__inline__", "__launch_bounds__", "__attribute__", "__restrict",
    "__inline", "__extension__", "__builtin_expect"};

// Macro-like words on the lines around a syntax error (an unknown macro in front of a
// declarator reads as bad grammar): capitals (FORCE_INLINE) and __name__ words
// (PyTorch's __ubsan_ignore_undefined__) that the source does not define itself.
void MacroLikeNames(const Source& src, int line, std::vector<std::string>& names) {
  static const std::regex kMacroLike(R"re([A-Z][A-Z0-9_]*_[A-Z0-9_]*|[A-Z][A-Z0-9]{2,}|__\w+__)re");
  for (const std::string& word : Identifiers(src.Around(line), true))
    if (std::regex_match(word, kMacroLike) && !kStandardMacros.contains(word) && !kCompilerWords.contains(word) &&
        !src.Defines(word))
      names.push_back(word);
}

bool MentionsTorch(std::string_view message) {
  for (std::string_view p : {"torch", "at::", "c10", "py::", "pybind11", "Tensor", "kvault_lite", "Scalar"})
    if (message.find(p) != std::string_view::npos) return true;
  return false;
}

LiteFailureJudgement Doubt(std::string why) { return {false, std::move(why), {}, {}}; }

}  // namespace

LiteFailureJudgement JudgeLiteFailure(std::string_view diagnostics, std::string_view source_path,
                                      std::string_view source_text, std::string_view lite_include_dir) {
  // Matched by std::regex below: text past its bounds is the full build's to judge.
  if (!FitsRegex(source_text)) return Doubt("the source has a line or a blank run too long to match");
  if (!FitsRegex(diagnostics)) return Doubt("a diagnostic line too long to match");
  const Source src(source_text);
  LiteFailureJudgement j;
  bool syntax_before = false;
  int errors = 0;
  for (const std::string& raw : Split(diagnostics, '\n')) {
    const std::string text = AsciiQuotes(raw);
    static const std::regex kCut(R"re(^\[\.\.\. \d+ bytes omitted \.\.\.\]$)re");  // util/strings.h
    if (std::regex_match(text, kCut)) return Doubt("the diagnostics were cut: some errors are unseen");
    const bool context = text.find(": In function '") != std::string::npos ||
                         text.find(": In member function '") != std::string::npos ||
                         text.find(": In lambda function") != std::string::npos;
    if (!context && ((!lite_include_dir.empty() && text.find(lite_include_dir) != std::string::npos) ||
                     text.find("kvault_lite") != std::string::npos))
      return Doubt("the diagnostics name the lite headers");
    if (text.find("did you forget to '#include") != std::string::npos)
      return Doubt("a header the lite headers may not include");
    const std::optional<Located> at = ParseLocated(text);
    if (!at) {
      // The driver's own errors, nvcc's unlocated ones ("At end of source: error").
      static const std::regex kUnlocated(R"re(^(\S+: (fatal )?error\b|nvcc (fatal|error)\b|At end of source: error))re");
      if (std::regex_search(text, kUnlocated)) return Doubt("an error at no line of the source");
      continue;
    }
    if (at->kind == "warning" || at->kind == "remark") continue;
    if (at->path != source_path) return Doubt("a diagnostic in " + at->path);
    if (at->kind == "note") continue;
    if (at->kind != "error") return Doubt("a " + at->kind + ": " + at->message);
    ++errors;
    const Pattern* match = nullptr;
    std::smatch m;
    for (const Pattern& p : kPatterns)
      if (std::regex_match(at->message, m, std::regex(p.regex))) {
        match = &p;
        break;
      }
    if (!match) return Doubt("line " + std::to_string(at->line) + ": " + Truncate(at->message, 200));
    const std::string first = m.size() > 1 ? std::string(m[1]) : "";
    switch (match->kind) {
      case Kind::kSyntax:
        MacroLikeNames(src, at->line, j.macro_like);
        syntax_before = true;
        break;
      case Kind::kUndeclared:
        // After a syntax error, a name the source declares is that error's echo (the
        // declaration it broke); otherwise PyTorch's headers must not hold it.
        if (!(syntax_before && !src.DeclaredTypes(first).empty())) j.undeclared.push_back(first);
        break;
      case Kind::kRedeclared:
        if (src.DeclaredTypes(first).size() < 2) return Doubt("'" + first + "' redeclared, once by a header");
        break;
      case Kind::kTypeMismatch:
        if (MentionsTorch(at->message)) return Doubt("line " + std::to_string(at->line) + ": " + at->message);
        for (size_t g = 1; g < m.size(); ++g)
          if (m[g].matched && m[g].str().find_first_of("*&") != std::string::npos && !BuiltinTypeText(m[g]))
            return Doubt("line " + std::to_string(at->line) + ": a type not builtin: " + std::string(m[g]));
        if (std::string name = NonBuiltinName(src, at->line); !name.empty())
          return Doubt("line " + std::to_string(at->line) + ": a type error beside '" + name + "'");
        break;
      case Kind::kBuiltinMember:
      case Kind::kHostLaunch:
        break;
    }
    if (j.why.empty()) j.why = "line " + std::to_string(at->line) + ": " + Truncate(at->message, 200);
  }
  if (errors == 0) return Doubt("no error at a line of the source");
  for (std::vector<std::string>* names : {&j.undeclared, &j.macro_like}) {
    std::sort(names->begin(), names->end());
    names->erase(std::unique(names->begin(), names->end()), names->end());
  }
  j.own = true;
  return j;
}

std::string WithPyTorchNames(std::string diagnostics) {
  for (size_t at; (at = diagnostics.find("kvault_lite::")) != std::string::npos;)
    diagnostics.replace(at, std::string_view("kvault_lite::").size(), "at::");
  return diagnostics;
}

std::vector<std::string> NamesOutsideSource(std::string_view preprocessed, std::string_view source_path,
                                            const std::vector<std::string>& names) {
  const std::unordered_set<std::string_view> wanted(names.begin(), names.end());
  std::set<std::string> found;
  bool in_source = false;
  const std::string marker = "\"" + std::string(source_path) + "\"";
  size_t pos = 0;
  while (pos < preprocessed.size()) {
    size_t end = preprocessed.find('\n', pos);
    if (end == std::string_view::npos) end = preprocessed.size();
    const std::string_view line = preprocessed.substr(pos, end - pos);
    pos = end + 1;
    // Line markers: # 12 "path" flags
    if (line.size() > 2 && line[0] == '#' && line[1] == ' ' && std::isdigit(static_cast<unsigned char>(line[2]))) {
      const size_t q = line.find('"');
      in_source = q != std::string_view::npos && line.substr(q, marker.size()) == marker &&
                  (q + marker.size() == line.size() || line[q + marker.size()] == ' ');
      continue;
    }
    if (in_source) continue;
    for (size_t i = 0; i < line.size();) {
      const char c = line[i];
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t k = i;
        while (k < line.size() && (std::isalnum(static_cast<unsigned char>(line[k])) || line[k] == '_')) ++k;
        if (wanted.contains(line.substr(i, k - i))) found.emplace(line.substr(i, k - i));
        i = k;
      } else {
        ++i;
      }
    }
  }
  return {found.begin(), found.end()};
}

}  // namespace kvault
