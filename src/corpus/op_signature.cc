#include "corpus/op_signature.h"

#include <algorithm>
#include <map>

#include "corpus/normalize.h"
#include "util/sha256.h"

namespace kvault::corpus {
namespace {

struct Line {
  int indent = 0;
  bool blank = true;
  std::string_view text;
};

std::vector<Line> SplitLines(std::string_view src) {
  std::vector<Line> lines;
  size_t start = 0;
  while (start <= src.size()) {
    size_t end = src.find('\n', start);
    if (end == std::string_view::npos) end = src.size();
    Line l;
    l.text = src.substr(start, end - start);
    size_t k = 0;
    while (k < l.text.size() && (l.text[k] == ' ' || l.text[k] == '\t'))
      l.indent += l.text[k++] == '\t' ? 8 : 1;
    l.blank = k == l.text.size() || l.text[k] == '#' || l.text[k] == '\r';
    lines.push_back(l);
    start = end + 1;
  }
  return lines;
}

// A block: the header line index and the last line of its body (1-based lines as the
// tokenizer counts them: index + 1).
struct Block {
  int first = 0, last = -1;  // 1-based, inclusive; empty when last < first
};

// The body of the first line at indent > `min_indent` (or any indent when min_indent
// < 0) inside `within` whose text starts with `header`.
Block FindBlock(const std::vector<Line>& lines, std::string_view header, Block within, int min_indent) {
  for (int i = within.first - 1; i < within.last && i < static_cast<int>(lines.size()); ++i) {
    const Line& l = lines[i];
    if (l.blank || l.indent <= min_indent) continue;
    std::string_view t = l.text.substr(std::min(l.text.size(), l.text.find_first_not_of(" \t")));
    if (!t.starts_with(header)) continue;
    int end = i + 1;
    while (end < within.last && end < static_cast<int>(lines.size()) &&
           (lines[end].blank || lines[end].indent > l.indent))
      ++end;
    return {i + 1, end};
  }
  return {};
}

std::vector<Token> TokensIn(const std::vector<Token>& tokens, Block b) {
  std::vector<Token> out;
  for (const Token& t : tokens)
    if (t.line >= b.first && t.line <= b.last) out.push_back(t);
  return out;
}

using Bindings = std::map<std::string, std::vector<Token>, std::less<>>;

// Splits tokens at top-level commas.
std::vector<std::vector<Token>> SplitTopLevel(const std::vector<Token>& tokens) {
  std::vector<std::vector<Token>> parts(1);
  int depth = 0;
  for (const Token& t : tokens) {
    if (t.text == "(" || t.text == "[" || t.text == "{") ++depth;
    if (t.text == ")" || t.text == "]" || t.text == "}") --depth;
    if (t.text == "," && depth == 0) parts.emplace_back();
    else parts.back().push_back(t);
  }
  return parts;
}

// True when `tokens` is one parenthesized group: "(" ... ")" with nothing outside.
bool Parenthesized(const std::vector<Token>& tokens) {
  if (tokens.size() < 2 || tokens.front().text != "(" || tokens.back().text != ")") return false;
  int depth = 0;
  for (size_t k = 0; k < tokens.size(); ++k) {
    if (tokens[k].text == "(" || tokens[k].text == "[" || tokens[k].text == "{") ++depth;
    if (tokens[k].text == ")" || tokens[k].text == "]" || tokens[k].text == "}") --depth;
    if (depth == 0 && k + 1 < tokens.size()) return false;
  }
  return true;
}

// Module-level assignments (indent 0): `NAME = value`, `A, B = x, y`, `A, B = (x, y)`
// and `A = B = value`.
Bindings Constants(const std::vector<Token>& tokens, const std::vector<Line>& lines) {
  Bindings out;
  for (size_t k = 0; k < tokens.size(); ++k) {
    const Token& t = tokens[k];
    bool line_start = k == 0 || tokens[k - 1].line != t.line;
    if (!line_start || t.kind != TokenKind::kIdentifier || lines[t.line - 1].indent != 0) continue;
    // The line's parts between top-level "=": targets, then the value (`h = w = 128`).
    std::vector<std::vector<Token>> parts(1);
    int depth = 0;
    for (size_t j = k; j < tokens.size() && tokens[j].line == t.line; ++j) {
      const std::string_view x = tokens[j].text;
      if (x == "(" || x == "[" || x == "{") ++depth;
      if (x == ")" || x == "]" || x == "}") --depth;
      if (x == "=" && depth == 0) parts.emplace_back();
      else parts.back().push_back(tokens[j]);
    }
    if (parts.size() < 2) continue;
    const std::vector<Token>& rhs = parts.back();
    for (size_t p = 0; p + 1 < parts.size(); ++p) {
      auto names = SplitTopLevel(parts[p]), values = SplitTopLevel(rhs);
      if (names.size() > 1 && values.size() == 1 && Parenthesized(rhs)) {  // a, b = (1, 2)
        values = SplitTopLevel(std::vector<Token>(rhs.begin() + 1, rhs.end() - 1));
      }
      if (names.size() != values.size() && names.size() != 1) continue;
      if (names.size() == 1) values = {rhs};
      for (size_t n = 0; n < names.size(); ++n)
        if (names[n].size() == 1 && names[n][0].kind == TokenKind::kIdentifier)
          out[std::string(names[n][0].text)] = values[n];
    }
  }
  return out;
}

// The parameters of a `def name(self, a, b=1, c: int)` header, bound to "$0", "$1",
// ... so that a constructor's arguments read the same under any parameter names.
Bindings Parameters(const std::vector<Token>& header) {
  static const std::string_view kSlots[] = {"$0", "$1", "$2", "$3", "$4", "$5", "$6", "$7",
                                            "$8", "$9", "$10", "$11", "$12", "$13", "$14", "$15"};
  Bindings out;
  auto open = std::find_if(header.begin(), header.end(), [](const Token& t) { return t.text == "("; });
  if (open == header.end()) return out;
  std::vector<Token> inside(open + 1, header.end());
  size_t slot = 0;
  for (const auto& part : SplitTopLevel(inside)) {
    if (part.empty() || part[0].kind != TokenKind::kIdentifier || part[0].text == "self") continue;
    if (slot < std::size(kSlots)) out[std::string(part[0].text)] = {{TokenKind::kIdentifier, kSlots[slot++], part[0].line}};
  }
  return out;
}

// Token text with constants substituted (two levels deep) and, when the result is a
// product of integers, multiplied out.
class Resolver {
 public:
  explicit Resolver(const Bindings& constants)
      : constants_(constants) {}

  std::string Text(const std::vector<Token>& tokens, int depth = 0) const {
    std::string out;
    for (const Token& t : tokens) {
      auto it = t.kind == TokenKind::kIdentifier ? constants_.find(t.text) : constants_.end();
      if (it != constants_.end() && depth < 2) out += Evaluate(Text(it->second, depth + 1));
      else out += t.text;
    }
    return out;
  }

  // "4*256" -> "1024"; anything else unchanged.
  static std::string Evaluate(const std::string& expr) {
    long long product = 1;
    size_t k = 0;
    while (k < expr.size()) {
      size_t j = k;
      while (j < expr.size() && isdigit(static_cast<unsigned char>(expr[j]))) ++j;
      if (j == k || j - k > 12) return expr;
      product *= std::stoll(expr.substr(k, j - k));
      if (j == expr.size()) return std::to_string(product);
      if (expr[j] != '*') return expr;
      k = j + 1;
    }
    return expr;
  }

 private:
  const Bindings& constants_;
};

// Each call argument list "(...)" starting at tokens[open] resolved to text; `end` is
// set to the index after the closing parenthesis.
std::string CallArgs(const std::vector<Token>& tokens, size_t open, const Resolver& r, size_t* end) {
  int depth = 0;
  std::vector<Token> args;
  size_t k = open;
  for (; k < tokens.size(); ++k) {
    if (tokens[k].text == "(") ++depth;
    if (tokens[k].text == ")" && --depth == 0) break;
    if (k > open) args.push_back(tokens[k]);
  }
  *end = k + 1;
  // Positional arguments in order; keyword arguments (name=value) after them, sorted,
  // since their order does not change the call.
  std::vector<std::string> positional, keyword;
  std::vector<Token> arg;
  auto flush = [&] {
    if (arg.empty()) return;
    const bool named = arg.size() > 1 && arg[0].kind == TokenKind::kIdentifier && arg[1].text == "=";
    if (named) {  // the keyword is the callee's name, never a constant or a parameter
      keyword.push_back(std::string(arg[0].text) + "=" +
                        Resolver::Evaluate(r.Text(std::vector<Token>(arg.begin() + 2, arg.end()))));
    } else {
      positional.push_back(Resolver::Evaluate(r.Text(arg)));
    }
    arg.clear();
  };
  int inner = 0;
  for (const Token& t : args) {
    if (t.text == "(" || t.text == "[") ++inner;
    if (t.text == ")" || t.text == "]") --inner;
    if (t.text == "," && inner == 0) flush();
    else arg.push_back(t);
  }
  flush();
  std::sort(keyword.begin(), keyword.end());
  positional.insert(positional.end(), keyword.begin(), keyword.end());
  std::string text = "(";
  for (const std::string& a : positional) text += (text.size() > 1 ? "," : "") + a;
  return text + ")";
}

// The identifier chain ending at tokens[k] (a.b.c), and where it starts.
std::vector<std::string_view> ChainBefore(const std::vector<Token>& tokens, size_t k) {
  std::vector<std::string_view> chain{tokens[k].text};
  while (k >= 2 && tokens[k - 1].text == "." && tokens[k - 2].kind == TokenKind::kIdentifier) {
    chain.insert(chain.begin(), tokens[k - 2].text);
    k -= 2;
  }
  return chain;
}

std::map<std::string, std::string, std::less<>> Submodules(const std::vector<Token>& init,
                                                           const Resolver& r) {
  std::map<std::string, std::string, std::less<>> out;
  for (size_t k = 0; k + 4 < init.size(); ++k) {
    if (init[k].text != "self" || init[k + 1].text != "." || init[k + 3].text != "=") continue;
    size_t j = k + 4;
    while (j + 1 < init.size() && init[j + 1].text == ".") j += 2;
    if (j + 1 >= init.size() || init[j + 1].text != "(") continue;
    size_t end;
    out[std::string(init[k + 2].text)] = std::string(init[j].text) + CallArgs(init, j + 1, r, &end);
  }
  return out;
}

std::vector<std::string> ForwardOps(const std::vector<Token>& body,
                                    const std::map<std::string, std::string, std::less<>>& subs) {
  static const std::string_view kOperators[] = {"+", "-", "*", "/", "@", "%"};
  std::vector<std::string> ops;
  for (size_t k = 0; k < body.size(); ++k) {
    const Token& t = body[k];
    if (t.kind == TokenKind::kPunct &&
        std::find(std::begin(kOperators), std::end(kOperators), t.text) != std::end(kOperators)) {
      ops.push_back("op:" + std::string(t.text));
      continue;
    }
    if (t.kind != TokenKind::kIdentifier || k + 1 >= body.size() || body[k + 1].text != "(") continue;
    if (t.text == "def") continue;
    std::vector<std::string_view> chain = ChainBefore(body, k);
    if (chain.size() == 1) {
      ops.push_back(IsKeptName(t.text, LanguageFamily::kPython) ? std::string(t.text) : "call");
    } else if (chain[0] == "self" && chain.size() == 2) {
      auto it = subs.find(chain[1]);
      ops.push_back(it != subs.end() ? it->second : "self.call");
    } else if (IsKeptName(chain[0], LanguageFamily::kPython)) {
      ops.push_back(std::string(chain.back()));
    } else {
      ops.push_back(std::string(".").append(chain.back()));
    }
  }
  return ops;
}

std::vector<std::string> InputCalls(const std::vector<Token>& body, const Resolver& r) {
  std::vector<std::string> out;
  for (size_t k = 0; k + 1 < body.size(); ++k) {
    if (body[k].kind != TokenKind::kIdentifier || body[k + 1].text != "(") continue;
    if (k == 0 || body[k - 1].text != ".") continue;  // torch.randn(...), not helper(...)
    size_t end;
    out.push_back(std::string(body[k].text) + CallArgs(body, k + 1, r, &end));
    k = end - 1;
  }
  return out;
}

// The values in get_init_inputs' return list.
std::vector<std::string> InitValues(const std::vector<Token>& body, const Resolver& r) {
  std::vector<std::string> out;
  auto ret = std::find_if(body.begin(), body.end(), [](const Token& t) { return t.text == "return"; });
  if (ret == body.end()) return out;
  std::vector<Token> rest(ret + 1, body.end());
  if (!rest.empty() && rest.front().text == "[") {
    rest.front().text = "(";
    if (rest.back().text == "]") rest.back().text = ")";
    size_t end;
    std::string args = CallArgs(rest, 0, r, &end);
    out.push_back(args);
  }
  return out;
}

// An input drawn from another random distribution is the same task resized: randn
// reads as rand (and randn_like as rand_like) in the shape-free signature.
std::string SameDistribution(const std::string& input) {
  if (input.starts_with("randn(")) return "rand(" + input.substr(6);
  if (input.starts_with("randn_like(")) return "rand_like(" + input.substr(11);
  return input;
}

// The task's model: `class Model`, else (a renamed copy) the top-level class with a
// `forward` that no other such class builds: the network, not one of its parts (the
// last of them when several are not built by another).
Block ModelClass(const std::vector<Line>& lines, const std::vector<Token>& tokens, Block file) {
  std::vector<std::pair<std::string_view, Block>> classes;
  for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
    const Line& l = lines[i];
    if (l.blank || l.indent != 0 || !l.text.starts_with("class ")) continue;
    Block c = FindBlock(lines, "class ", {i + 1, file.last}, -1);  // this line's class
    if (c.last < c.first || FindBlock(lines, "def forward", c, 0).last < c.first) continue;
    std::string_view name = l.text.substr(6);
    name = name.substr(0, name.find_first_of("(: \t"));
    if (name == "Model") return c;
    classes.push_back({name, c});
  }
  Block found;
  for (const auto& [name, block] : classes) {
    bool built = false;
    for (const auto& [other, other_block] : classes)
      if (other != name)
        for (const Token& t : TokensIn(tokens, {other_block.first + 1, other_block.last})) built |= t.text == name;
    if (!built || found.last < found.first) found = block;
  }
  return found;
}

}  // namespace

std::string EraseNumbers(std::string_view text) {
  std::string out;
  for (size_t k = 0; k < text.size();) {
    const bool starts = isdigit(static_cast<unsigned char>(text[k])) &&
                        (k == 0 || !(isalnum(static_cast<unsigned char>(text[k - 1])) || text[k - 1] == '_'));
    if (!starts) {
      out += text[k++];
      continue;
    }
    while (k < text.size() && (isalnum(static_cast<unsigned char>(text[k])) || text[k] == '.' ||
                               ((text[k] == '-' || text[k] == '+') && (text[k - 1] == 'e' || text[k - 1] == 'E'))))
      ++k;
    out += '#';
  }
  return out;
}

std::optional<OpSignature> ReferenceSignature(std::string_view source) {
  std::vector<Line> lines = SplitLines(source);
  std::vector<Token> tokens = Tokenize(source, LanguageFamily::kPython);
  Block file{1, static_cast<int>(lines.size())};
  Block model = ModelClass(lines, tokens, file);
  Block inputs = FindBlock(lines, "def get_inputs", file, -1);
  if (model.last < model.first || inputs.last < inputs.first) return std::nullopt;
  Block forward = FindBlock(lines, "def forward", model, lines[model.first - 1].indent);
  if (forward.last < forward.first) return std::nullopt;
  Block init = FindBlock(lines, "def __init__", model, lines[model.first - 1].indent);
  Block init_inputs = FindBlock(lines, "def get_init_inputs", file, -1);

  Bindings constants = Constants(tokens, lines);
  Resolver resolver(constants);
  std::vector<Token> init_tokens = TokensIn(tokens, init);
  Bindings init_scope = constants;
  for (auto& [name, slot] : Parameters(TokensIn(tokens, {init.first, init.first}))) init_scope[name] = slot;
  Resolver init_resolver(init_scope);
  OpSignature s;
  std::vector<Token> fwd = TokensIn(tokens, {forward.first + 1, forward.last});
  s.ops = ForwardOps(fwd, Submodules(init_tokens, init_resolver));
  if (s.ops.empty()) return std::nullopt;
  s.inputs = InputCalls(TokensIn(tokens, inputs), resolver);
  if (init_inputs.last >= init_inputs.first) s.init = InitValues(TokensIn(tokens, init_inputs), resolver);
  std::sort(s.ops.begin(), s.ops.end());
  std::sort(s.inputs.begin(), s.inputs.end());
  KeyHasher key;
  for (const auto& op : s.ops) key.Add("op", op);
  for (const auto& in : s.inputs) key.Add("input", in);
  for (const auto& v : s.init) key.Add("init", v);
  s.key = key.Hex();
  KeyHasher shape_free;
  for (const auto& op : s.ops) shape_free.Add("op", EraseNumbers(op));
  std::vector<std::string> ranks;
  for (const auto& in : s.inputs) ranks.push_back(EraseNumbers(SameDistribution(in)));
  std::sort(ranks.begin(), ranks.end());
  for (const auto& in : ranks) shape_free.Add("input", in);
  for (const auto& v : s.init) shape_free.Add("init", EraseNumbers(v));
  s.shape_free_key = shape_free.Hex();
  return s;
}

}  // namespace kvault::corpus
