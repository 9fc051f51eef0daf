#include "agent/splice.h"

#include <cctype>

namespace kvault::agent {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

struct Token {
  enum Kind { kIdent, kPunct } kind;
  std::string_view text;
  size_t pos;
};

// Identifiers and single punctuation characters; comments, literals and numbers skipped.
std::vector<Token> Lex(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const char c = s[i];
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      const size_t e = s.find("*/", i + 2);
      i = e == std::string_view::npos ? n : e + 2;
    } else if (c == 'R' && i + 1 < n && s[i + 1] == '"') {  // raw string R"delim( ... )delim"
      const size_t paren = s.find('(', i + 2);
      if (paren == std::string_view::npos) { i = n; continue; }
      const std::string close = ")" + std::string(s.substr(i + 2, paren - i - 2)) + "\"";
      const size_t e = s.find(close, paren);
      i = e == std::string_view::npos ? n : e + close.size();
    } else if (c == '"' || c == '\'') {
      ++i;
      while (i < n && s[i] != c && s[i] != '\n') i += (s[i] == '\\') ? 2 : 1;
      ++i;
    } else if (IsIdentStart(c)) {
      const size_t b = i;
      while (i < n && IsIdent(s[i])) ++i;
      out.push_back({Token::kIdent, s.substr(b, i - b), b});
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i < n && (IsIdent(s[i]) || s[i] == '.')) ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else {
      out.push_back({Token::kPunct, s.substr(i, 1), i});
      ++i;
    }
  }
  return out;
}

bool Is(const Token& t, std::string_view text) { return t.text == text; }

// Index of the token closing the bracket opened at `open`, or tokens.size().
size_t Match(const std::vector<Token>& t, size_t open, char o, char c) {
  int depth = 0;
  for (size_t i = open; i < t.size(); ++i) {
    if (t[i].kind != Token::kPunct) continue;
    if (t[i].text[0] == o) ++depth;
    if (t[i].text[0] == c && --depth == 0) return i;
  }
  return t.size();
}

// Where the definition whose `__global__` is token g really begins.
size_t DefinitionBegin(std::string_view s, const std::vector<Token>& t, size_t g) {
  size_t first = g;
  while (first > 0) {
    const Token& p = t[first - 1];
    if (p.kind == Token::kIdent && (Is(p, "static") || Is(p, "inline") || Is(p, "extern"))) {
      --first;
    } else if (Is(p, ">")) {  // template <...>
      int depth = 0;
      size_t k = first - 1;
      for (;; --k) {
        if (Is(t[k], ">")) ++depth;
        if (Is(t[k], "<") && --depth == 0) break;
        if (k == 0) return t[first].pos;
      }
      if (k == 0 || !Is(t[k - 1], "template")) break;
      first = k - 1;
    } else {
      break;
    }
  }
  size_t begin = t[first].pos;
  // extern "C" : the string literal is not a token; include it by starting at `extern`.
  (void)s;
  return begin;
}

}  // namespace

Result<std::vector<KernelSpan>> FindKernels(std::string_view source) {
  const std::vector<Token> t = Lex(source);
  std::vector<KernelSpan> out;
  for (size_t g = 0; g < t.size(); ++g) {
    if (!(t[g].kind == Token::kIdent && Is(t[g], "__global__"))) continue;
    // The name: the first identifier followed by '(' that is not an attribute.
    size_t i = g + 1;
    std::string_view name;
    size_t params = t.size();
    while (i < t.size()) {
      if (Is(t[i], ";") || Is(t[i], "{")) break;
      if (t[i].kind == Token::kIdent && i + 1 < t.size() && Is(t[i + 1], "(")) {
        if (Is(t[i], "__launch_bounds__") || Is(t[i], "__attribute__") || Is(t[i], "alignas") ||
            Is(t[i], "__declspec")) {
          i = Match(t, i + 1, '(', ')') + 1;
          continue;
        }
        name = t[i].text;
        params = i + 1;
        break;
      }
      ++i;
    }
    if (name.empty()) continue;
    const size_t close = Match(t, params, '(', ')');
    if (close >= t.size()) return Error{"unbalanced parentheses after kernel '" + std::string(name) + "'"};
    size_t j = close + 1;
    while (j < t.size() && !Is(t[j], "{") && !Is(t[j], ";")) ++j;
    if (j >= t.size() || Is(t[j], ";")) {  // a declaration
      g = j < t.size() ? j : g;
      continue;
    }
    const size_t body_end = Match(t, j, '{', '}');
    if (body_end >= t.size()) return Error{"unbalanced braces in kernel '" + std::string(name) + "'"};
    out.push_back({std::string(name), DefinitionBegin(source, t, g), t[body_end].pos + 1});
    g = body_end;
  }
  return out;
}

std::string RenameIdentifier(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  size_t last = 0;
  for (const Token& tok : Lex(text)) {
    if (tok.kind != Token::kIdent || tok.text != from) continue;
    out.append(text.substr(last, tok.pos - last));
    out.append(to);
    last = tok.pos + tok.text.size();
  }
  out.append(text.substr(last));
  return out;
}

Result<std::string> SpliceKernel(std::string_view baseline, std::string_view rewrite) {
  auto base = FindKernels(baseline);
  if (!base) return Error{"the baseline cannot be scanned: " + base.error()};
  if (base->empty()) return Error{"the baseline has no __global__ kernel to replace"};
  auto mine = FindKernels(rewrite);
  if (!mine) return Error{"your kernel cannot be scanned: " + mine.error()};
  if (mine->size() != 1)
    return Error{"your answer must define exactly one __global__ kernel; it defines " +
                 std::to_string(mine->size())};
  const std::string& new_name = mine->front().name;
  const KernelSpan* target = nullptr;
  for (const KernelSpan& k : *base)
    if (k.name == new_name) target = &k;
  std::string snippet(rewrite);
  if (!target) {
    if (base->size() != 1)
      return Error{"your kernel '" + new_name + "' matches none of the baseline's kernels (" +
                   std::to_string(base->size()) + "); keep the name of the kernel you rewrite"};
    target = &base->front();
    snippet = RenameIdentifier(rewrite, new_name, target->name);
  }
  while (!snippet.empty() && (snippet.back() == '\n' || snippet.back() == ' ')) snippet.pop_back();
  std::string out(baseline.substr(0, target->begin));
  out += snippet;
  out += baseline.substr(target->end);
  return out;
}

}  // namespace kvault::agent
