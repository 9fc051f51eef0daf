#include "corpus/normalize.h"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "util/sha256.h"
#include "util/strings.h"

namespace kvault::corpus {
namespace {

// Keywords and preprocessor words of C, C++, CUDA and HIP, and the types they share.
constexpr std::string_view kCKeywords[] = {
    "alignas", "alignof", "asm", "auto", "bool", "break", "case", "catch", "char", "class",
    "const", "constexpr", "const_cast", "continue", "decltype", "default", "define", "defined",
    "delete", "do", "double", "dynamic_cast", "elif", "else", "endif", "enum", "explicit",
    "extern", "false", "float", "for", "friend", "goto", "if", "ifdef", "ifndef", "include",
    "inline", "int", "int8_t", "int16_t", "int32_t", "int64_t", "long", "mutable", "namespace",
    "new", "noexcept", "nullptr", "operator", "pragma", "private", "protected", "public",
    "register", "reinterpret_cast", "return", "short", "signed", "size_t", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "throw", "true",
    "try", "typedef", "typename", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "undef",
    "union", "unroll", "unsigned", "using", "virtual", "void", "volatile", "while"};

constexpr std::string_view kPythonKeywords[] = {
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
    "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
    "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return",
    "try", "while", "with", "yield", "self", "super", "range", "len", "int", "float", "bool",
    "str", "list", "tuple", "dict", "min", "max", "abs", "sum", "print", "isinstance",
    "__init__", "__name__"};

// API names kept in both families: GPU built-ins, math functions, the modules whose
// members name operations, and the entry points of the task and candidate formats.
constexpr std::string_view kWellKnown[] = {
    // CUDA / HIP built-ins and qualifiers
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "__global__", "__device__",
    "__host__", "__shared__", "__constant__", "__restrict__", "__forceinline__",
    "__launch_bounds__", "__syncthreads", "__syncwarp", "__shfl_sync", "__shfl_down_sync",
    "__shfl_xor_sync", "__shfl_up_sync", "atomicAdd", "atomicMax", "atomicMin", "atomicCAS",
    "atomicExch", "dim3", "hipLaunchKernelGGL", "__half", "__nv_bfloat16", "hip_bfloat16",
    "half", "float2", "float4", "int4", "__ldg", "__expf", "__fdividef",
    "__half2float", "__float2half",
    // math
    "exp", "expf", "log", "logf", "sqrt", "sqrtf", "rsqrtf", "tanh", "tanhf", "fabs", "fabsf",
    "fmax", "fmaxf", "fmin", "fminf", "pow", "powf", "erf", "erff", "sin", "sinf", "cos",
    "cosf", "floor", "ceil", "round", "fma", "fmaf", "max", "min",
    // modules and namespaces whose members are operations
    "torch", "at", "c10", "std", "nn", "F", "functional", "tl", "triton", "math", "np",
    "numpy", "cuda", "hip", "Tensor", "TORCH_CHECK", "TORCH_EXTENSION_NAME", "PYBIND11_MODULE",
    "AT_DISPATCH_FLOATING_TYPES", "AT_DISPATCH_FLOATING_TYPES_AND_HALF", "load_inline",
    // task and candidate format entry points
    "Model", "ModelNew", "forward", "get_inputs", "get_init_inputs", "module_fn",
    "kvault_forward"};

template <size_t N>
std::unordered_set<std::string_view> SetOf(const std::string_view (&words)[N]) {
  return {std::begin(words), std::end(words)};
}

const std::unordered_set<std::string_view>& KeptNames(LanguageFamily family) {
  static const auto* c = [] {
    auto s = new std::unordered_set<std::string_view>(SetOf(kCKeywords));
    for (auto w : kWellKnown) s->insert(w);
    return s;
  }();
  static const auto* py = [] {
    auto s = new std::unordered_set<std::string_view>(SetOf(kPythonKeywords));
    for (auto w : kWellKnown) s->insert(w);
    return s;
  }();
  return family == LanguageFamily::kC ? *c : *py;
}

bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }

bool IsPythonStringPrefix(std::string_view word) {
  if (word.size() > 2) return false;
  for (char c : word)
    if (std::string_view("rRbBuUfF").find(c) == std::string_view::npos) return false;
  return true;
}

// The tokenizer's state over one source.
class Lexer {
 public:
  Lexer(std::string_view src, LanguageFamily family, int first_line)
      : s_(src), family_(family), line_(first_line) {}

  void Run(std::vector<Token>& out) {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\n') {
        ++line_;
        line_begin_ = ++i_;
        logical_start_ = brackets_ == 0;
        continue;
      }
      if (c == '\\' && s_.substr(i_ + 1, 1) == "\n") {  // a continued line
        ++line_;
        i_ += 2;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\\') { ++i_; continue; }
      if (SkipComment()) continue;
      const size_t first = out.size(), column = i_ - line_begin_;
      if (family_ == LanguageFamily::kC && c == '#' && AtLineStart() && LexInclude(out)) continue;
      if (IsIdentStart(c)) LexWord(out);
      else if (IsDigit(c) || (c == '.' && i_ + 1 < s_.size() && IsDigit(s_[i_ + 1]))) LexNumber(out);
      else if (c == '"' || c == '\'') LexString(out, i_);
      else LexPunct(out);
      if (family_ == LanguageFamily::kPython && logical_start_ && out.size() > first)
        out[first].indent = static_cast<int>(column);
      logical_start_ = false;
    }
  }

 private:
  bool AtLineStart() const {
    for (size_t j = i_; j > 0; --j) {
      char p = s_[j - 1];
      if (p == '\n') return true;
      if (p != ' ' && p != '\t') return false;
    }
    return true;
  }

  bool SkipComment() {
    if (family_ == LanguageFamily::kPython) {
      if (s_[i_] != '#') return false;
      while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      return true;
    }
    if (s_[i_] != '/' || i_ + 1 >= s_.size()) return false;
    if (s_[i_ + 1] == '/') {
      while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      return true;
    }
    if (s_[i_ + 1] == '*') {
      size_t end = s_.find("*/", i_ + 2);
      end = end == std::string_view::npos ? s_.size() : end + 2;
      line_ += static_cast<int>(std::count(s_.begin() + i_, s_.begin() + end, '\n'));
      i_ = end;
      return true;
    }
    return false;
  }

  // `#include <...>` / `#include "..."`: one string token, so header names are kept.
  bool LexInclude(std::vector<Token>& out) {
    size_t j = i_ + 1;
    while (j < s_.size() && (s_[j] == ' ' || s_[j] == '\t')) ++j;
    if (s_.substr(j, 7) != "include") return false;
    size_t end = s_.find('\n', i_);
    if (end == std::string_view::npos) end = s_.size();
    out.push_back({TokenKind::kString, Trim(s_.substr(i_, end - i_)), line_});
    i_ = end;
    return true;
  }

  void LexWord(std::vector<Token>& out) {
    size_t start = i_;
    while (i_ < s_.size() && IsIdentChar(s_[i_])) ++i_;
    std::string_view word = s_.substr(start, i_ - start);
    if (family_ == LanguageFamily::kPython && i_ < s_.size() && (s_[i_] == '"' || s_[i_] == '\'') &&
        IsPythonStringPrefix(word)) {
      LexString(out, start);
      return;
    }
    out.push_back({TokenKind::kIdentifier, word, line_});
  }

  void LexNumber(std::vector<Token>& out) {
    size_t start = i_;
    bool hex = s_.substr(i_, 2) == "0x" || s_.substr(i_, 2) == "0X";
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (IsIdentChar(c) || c == '.') { ++i_; continue; }
      if ((c == '+' || c == '-') && !hex && (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E')) { ++i_; continue; }
      break;
    }
    out.push_back({TokenKind::kNumber, s_.substr(start, i_ - start), line_});
  }

  // A string literal starting at `start` (its prefix, if any, included); the quote is
  // at i_. Python triple quotes run to the matching triple.
  void LexString(std::vector<Token>& out, size_t start) {
    char q = s_[i_];
    int line = line_;
    bool triple = family_ == LanguageFamily::kPython && s_.substr(i_, 3) == std::string(3, q);
    size_t end;
    if (triple) {
      end = s_.find(std::string(3, q), i_ + 3);
      end = end == std::string_view::npos ? s_.size() : end + 3;
    } else {
      end = i_ + 1;
      while (end < s_.size() && s_[end] != q && s_[end] != '\n') end += s_[end] == '\\' ? 2 : 1;
      end = std::min(end + 1, s_.size());
    }
    line_ += static_cast<int>(std::count(s_.begin() + i_, s_.begin() + end, '\n'));
    i_ = end;
    out.push_back({TokenKind::kString, s_.substr(start, end - start), line});
  }

  void LexPunct(std::vector<Token>& out) {
    std::string_view two = s_.substr(i_, 2);
    size_t len = (two == "::" || two == "->") ? 2 : 1;
    if (s_[i_] == '(' || s_[i_] == '[' || s_[i_] == '{') ++brackets_;
    if ((s_[i_] == ')' || s_[i_] == ']' || s_[i_] == '}') && brackets_ > 0) --brackets_;
    out.push_back({TokenKind::kPunct, s_.substr(i_, len), line_});
    i_ += len;
  }

  std::string_view s_;
  LanguageFamily family_;
  size_t i_ = 0;
  int line_;
  size_t line_begin_ = 0;     // where the current line starts
  int brackets_ = 0;          // open ( [ {: a line break inside does not end a line
  bool logical_start_ = true;  // the next token begins a logical line
};

// Python's blocks as tokens: `<indent>` where a logical line is indented deeper than
// the one before, one `<dedent>` per block it closes.
class Blocks {
 public:
  void Before(const Token& t, std::vector<std::string_view>& out) {
    if (t.indent < 0) return;
    if (levels_.empty()) { levels_.push_back(t.indent); return; }
    if (t.indent > levels_.back()) {
      levels_.push_back(t.indent);
      out.push_back("<indent>");
      return;
    }
    while (levels_.size() > 1 && t.indent < levels_.back()) {
      levels_.pop_back();
      out.push_back("<dedent>");
    }
    if (t.indent < levels_.back()) levels_.back() = t.indent;  // a snippet's outdented tail
  }

 private:
  std::vector<int> levels_;
};

bool IsTripleQuoted(std::string_view text) {
  size_t q = text.find_first_of("\"'");
  return q != std::string_view::npos && text.size() >= q + 6 &&
         text.substr(q, 3) == std::string(3, text[q]);
}

// Python: a string alone at the start of a statement after a ':' line (or at the top
// of the file) is a docstring; a triple-quoted string holding braces or semicolons is
// embedded C/CUDA source (load_inline) and is tokenized as such.
void ExpandPythonStrings(std::vector<Token>& tokens) {
  std::vector<Token> out;
  out.reserve(tokens.size());
  for (size_t k = 0; k < tokens.size(); ++k) {
    const Token& t = tokens[k];
    if (t.kind != TokenKind::kString) { out.push_back(t); continue; }
    bool starts_line = k == 0 || tokens[k - 1].line < t.line;
    bool after_header = k == 0 || tokens[k - 1].text == ":";
    bool ends_statement = k + 1 == tokens.size() || tokens[k + 1].line > t.line;
    if (starts_line && after_header && ends_statement) continue;  // docstring
    if (IsTripleQuoted(t.text) && t.text.find_first_of("{;") != std::string_view::npos) {
      size_t q = t.text.find_first_of("\"'");
      std::string_view inner = t.text.substr(q + 3, t.text.size() - q - 6);
      const size_t first = out.size();
      Lexer(inner, LanguageFamily::kC, t.line).Run(out);
      if (out.size() > first) out[first].indent = t.indent;
      continue;
    }
    out.push_back(t);
  }
  tokens.swap(out);
}

// "v<number>": the name of the number-th renamed identifier, from a table built once
// (or, past it, a string kept in `spill`).
std::string_view RenamedName(size_t number, std::deque<std::string>& spill) {
  // Appended, not "v" + ...: GCC 12 -O3 sees an overlap in the inlined insert.
  auto name = [](size_t n) { return std::string("v").append(std::to_string(n)); };
  static const auto* table = [&] {
    auto* names = new std::vector<std::string>(4096);
    for (size_t i = 0; i < names->size(); ++i) (*names)[i] = name(i);
    return names;
  }();
  if (number < table->size()) return (*table)[number];
  return spill.emplace_back(name(number));
}

// Words after which a name is used, not declared: `return x`, `case X:`, `import relu`,
// `x if c else y`, `#pragma omp ...`.
constexpr std::string_view kUsingWords[] = {
    "return", "case", "goto", "else", "do", "new", "delete", "throw", "sizeof", "alignof",
    "decltype", "co_return", "co_yield", "co_await", "pragma", "if", "elif", "ifdef", "ifndef",
    "undef", "defined", "include", "error", "not", "in", "and", "or", "is", "yield", "await",
    "while", "assert", "del", "raise", "from", "import", "with", "except", "print", "global",
    "nonlocal", "None", "True", "False", "pass", "break", "continue", "switch", "static_assert"};

// Words that name a type, so that `T* x` and `T& x` declare x (`a * b` declares nothing).
constexpr std::string_view kTypeWords[] = {
    "void", "bool", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
    "auto", "const", "volatile", "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t",
    "uint16_t", "uint32_t", "uint64_t", "half", "__half", "__nv_bfloat16", "hip_bfloat16",
    "float2", "float4", "int4", "dim3", "Tensor", "scalar_t"};

bool IsSingleAssign(const std::vector<Token>& t, size_t k) {  // t[k] is "=" alone, not "=="
  return k < t.size() && t[k].text == "=" && (k + 1 >= t.size() || t[k + 1].text != "=");
}

// The names a source declares: C-like `T name`, `T* name`, `name = ...`, `#define name`;
// Python `def name`, `class name`, parameters, assignment and `for` targets, `as name`,
// and `self.name = ...`. Only these are renamed in the numbered style: a name the source
// uses without declaring (an API function such as `log1pf`, a macro such as `FLT_MAX`)
// is part of what it computes, so a kernel calling another one is another kernel.
std::unordered_set<std::string_view> DeclaredNames(const std::vector<Token>& t, LanguageFamily family) {
  static const auto* using_words = new std::unordered_set<std::string_view>(SetOf(kUsingWords));
  static const auto* type_words = new std::unordered_set<std::string_view>(SetOf(kTypeWords));
  std::unordered_set<std::string_view> types;  // names after typename, class, struct, using, ...
  for (size_t k = 1; k < t.size(); ++k)
    if (t[k].kind == TokenKind::kIdentifier &&
        (t[k - 1].text == "typename" || t[k - 1].text == "class" || t[k - 1].text == "struct" ||
         t[k - 1].text == "union" || t[k - 1].text == "enum" || t[k - 1].text == "using"))
      types.insert(t[k].text);
  auto type_like = [&](size_t j) {
    if (t[j].kind != TokenKind::kIdentifier) return false;
    if (type_words->count(t[j].text) || types.count(t[j].text)) return true;
    return j > 0 && (t[j - 1].text == "::" || t[j - 1].text == "const");
  };
  std::unordered_set<std::string_view> out;
  int depth = 0;          // open ( and [
  int skip_line = -1;     // a preprocessor line other than #define declares nothing
  size_t line_start = 0;  // Python: the first token of the logical line
  for (size_t k = 0; k < t.size(); ++k) {
    const Token& tok = t[k];
    if (tok.indent >= 0) line_start = k;
    if (tok.text == "(" || tok.text == "[") ++depth;
    if ((tok.text == ")" || tok.text == "]") && depth > 0) --depth;
    if (tok.text == "#" && k + 1 < t.size() && t[k + 1].line == tok.line && t[k + 1].text != "define")
      skip_line = tok.line;
    if (tok.kind != TokenKind::kIdentifier || tok.line == skip_line) continue;
    const std::string_view prev = k > 0 ? t[k - 1].text : std::string_view();
    const bool python = family == LanguageFamily::kPython;
    bool declared = false;
    // `float v`, `torch::Tensor out`, `def f`, `class C`, `for i`, `as alias`, `#define N`.
    if (k > 0 && t[k - 1].kind == TokenKind::kIdentifier && !using_words->count(prev)) declared = true;
    // `const float* x`, `float** p`, `torch::Tensor& t`.
    if (!declared && (prev == "*" || prev == "&")) {
      size_t j = k - 1;
      while (j > 0 && (t[j].text == "*" || t[j].text == "&")) --j;
      declared = type_like(j);
    }
    // `x = ...` (not `x == ...`); in Python not a keyword argument `f(dim=1)`.
    if (!declared && IsSingleAssign(t, k + 1) && (!python || depth == 0)) declared = true;
    // Python: `a, self.b = ...` (the targets before a lone "=" of the logical line).
    const size_t target = prev == "." && k >= 2 && t[k - 2].text == "self" ? k - 2 : k;
    if (!declared && python && depth == 0 && k + 1 < t.size() && t[k + 1].text == "," &&
        (target == line_start || (target > 0 && t[target - 1].text == ","))) {
      for (size_t j = k + 1; j < t.size() && (j == k + 1 || t[j].indent < 0); ++j)
        if (t[j].text == "=" && !IsSingleAssign(t, j)) break;
        else if (IsSingleAssign(t, j) && t[j - 1].text != "=" && t[j - 1].text != "!" && t[j - 1].text != "<" &&
                 t[j - 1].text != ">") {
          declared = true;
          break;
        }
    }
    if (declared) out.insert(tok.text);
    // The parameters of `def name(...)` and `lambda ...:`, the targets of `for` (also
    // for a Python file read as C, such as a load_inline candidate of language cuda).
    if (tok.text == "def" || tok.text == "lambda" || tok.text == "for") {
      size_t j = tok.text == "def" ? k + 3 : k + 1;  // past "def name ("
      int d = 0;
      for (; j < t.size(); ++j) {
        const std::string_view x = t[j].text;
        if (x == "(" || x == "[" || x == "{") ++d;
        if (x == ")" || x == "]" || x == "}") {
          if (--d < 0 || (d == 0 && tok.text == "for")) break;  // C's `for (...)` ends here
        }
        if (d == 0 && ((tok.text == "lambda" && x == ":") || (tok.text == "for" && x == "in"))) break;
        const std::string_view before = t[j - 1].text;
        if (t[j].kind == TokenKind::kIdentifier && d == 0 &&
            (j == k + 1 || before == "," || before == "(" || before == "*"))
          out.insert(x);
        if (tok.text == "for" && d == 1 && t[j].kind == TokenKind::kIdentifier && (before == "(" || before == ","))
          out.insert(x);
      }
    }
  }
  return out;
}

uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace

LanguageFamily LanguageFamilyOf(std::string_view language, std::string_view source) {
  std::string l(language);
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
  static const std::unordered_set<std::string> c_names = {"c", "cpp", "c++", "cxx", "cc", "cuda",
                                                          "cu", "hip", "opencl", "native"};
  static const std::unordered_set<std::string> py_names = {"python", "py", "triton",
                                                           "kernelbench", "pytorch", "torch"};
  if (c_names.count(l)) return LanguageFamily::kC;
  if (py_names.count(l)) return LanguageFamily::kPython;
  size_t brace = source.find('{'), def = source.find("def ");
  return brace != std::string_view::npos && brace < def ? LanguageFamily::kC
                                                        : LanguageFamily::kPython;
}

std::vector<Token> Tokenize(std::string_view source, LanguageFamily family) {
  std::vector<Token> tokens;
  tokens.reserve(source.size() / 4);
  Lexer(source, family, 1).Run(tokens);
  if (family == LanguageFamily::kPython) ExpandPythonStrings(tokens);
  return tokens;
}

bool IsKeptName(std::string_view name, LanguageFamily family) {
  return KeptNames(family).count(name) > 0;
}

NormalizedView NormalizeView(std::string_view source, LanguageFamily family, RenameStyle style) {
  std::vector<Token> tokens = Tokenize(source, family);
  NormalizedView n;
  n.tokens.reserve(tokens.size());
  std::unordered_map<std::string_view, size_t> names;
  const auto& kept = KeptNames(family);
  const std::unordered_set<std::string_view> declared =
      style == RenameStyle::kNumbered ? DeclaredNames(tokens, family) : std::unordered_set<std::string_view>();
  Sha256 sha;
  Blocks blocks;
  for (size_t k = 0; k < tokens.size(); ++k) {
    const Token& t = tokens[k];
    if (family == LanguageFamily::kPython && style == RenameStyle::kNumbered) {
      const size_t before = n.tokens.size();
      blocks.Before(t, n.tokens);
      for (size_t b = before; b < n.tokens.size(); ++b) {
        sha.Update(n.tokens[b]);
        sha.Update("\n");
      }
    }
    std::string_view prev = k > 0 ? tokens[k - 1].text : std::string_view();
    bool member = prev == "." || prev == "->" || prev == "::";
    bool self_member = member && k >= 2 && tokens[k - 2].text == "self";
    bool keep = t.kind != TokenKind::kIdentifier || (member && !self_member) || kept.count(t.text) > 0 ||
                (style == RenameStyle::kNumbered && !declared.count(t.text));
    if (style == RenameStyle::kErased && t.kind == TokenKind::kNumber) {
      n.tokens.push_back("0");  // sizes and constants: a resized copy reads the same
    } else if (keep) {
      n.tokens.push_back(t.text);
    } else if (style == RenameStyle::kErased) {
      n.tokens.push_back("v");
    } else {
      auto [it, fresh] = names.try_emplace(t.text, names.size());
      n.tokens.push_back(RenamedName(it->second, n.spill));
    }
    sha.Update(n.tokens.back());
    sha.Update("\n");
  }
  n.key = ToHex(sha.Finish());
  return n;
}

NormalizedSource Normalize(std::string_view source, LanguageFamily family, RenameStyle style) {
  NormalizedView view = NormalizeView(source, family, style);
  NormalizedSource n;
  n.tokens.assign(view.tokens.begin(), view.tokens.end());
  n.key = std::move(view.key);
  return n;
}

std::vector<uint64_t> TokenHashes(const std::vector<std::string>& tokens) {
  std::vector<uint64_t> out;
  out.reserve(tokens.size());
  for (const std::string& t : tokens) {
    uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : t) h = (h ^ c) * 1099511628211ULL;
    out.push_back(Mix64(h));
  }
  return out;
}

uint64_t HashWindow(const uint64_t* first, size_t count) {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (size_t k = 0; k < count; ++k) h = Mix64(h ^ (first[k] + 0x632be59bd9b4e019ULL * (k + 1)));
  return h;
}

}  // namespace kvault::corpus
