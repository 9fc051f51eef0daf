#pragma once
// Normalised source: the form of a kernel's code that deduplication and
// decontamination compare (docs/corpus.md, "Deduplication"). Pure functions,
// thread-safe.
//
//   NormalizedSource n = Normalize(code, LanguageFamilyOf("hip"));
//   n.tokens   -> {"__global__", "void", "v0", "(", "float", "*", "v1", ...}
//   n.key      -> SHA-256 hex of the token stream: equal for two kernels that differ
//                 only in comments, whitespace and the names of their own identifiers
//
// Comments and whitespace are dropped; every identifier the source declares (a
// variable, parameter, function, type or macro of its own) that is not a keyword of
// the language or a well-known API name (threadIdx, __global__, torch.*, tl.*, ...) is
// renamed v0, v1, ... in order of first appearance; a name it uses without declaring
// (log1pf, FLT_MAX) is kept, as it says what is computed. Numbers and string literals are
// kept, so a changed constant or a different operation gives another key. In Python
// the blocks that indentation makes are tokens, `<indent>` and `<dedent>` (numbered
// style only): a statement moved out of its loop is another kernel.
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace kvault::corpus {

// Which tokenizer tables apply: C-like (C, C++, CUDA, HIP) or Python-like (Python,
// Triton, KernelBench files).
enum class LanguageFamily { kC, kPython };

// "cuda", "hip", "cpp", "c", "c++" -> kC; "python", "triton", "py", anything else that
// names Python -> kPython. Unknown names -> kC when `source` holds a '{' before any
// "def ", else kPython.
LanguageFamily LanguageFamilyOf(std::string_view language, std::string_view source = {});

enum class TokenKind { kIdentifier, kNumber, kString, kPunct };

struct Token {
  TokenKind kind;
  std::string_view text;  // a view into the source
  int line;               // 1-based
  // Python only: the column of a token that begins a logical line (outside brackets
  // and continuations), whose indentation opens or closes a block; -1 otherwise.
  int indent = -1;
};

// The tokens of `source` without comments and whitespace. Never fails: an
// unterminated string or comment runs to the end of the source.
std::vector<Token> Tokenize(std::string_view source, LanguageFamily family);

// True when `name` is kept by normalisation: a keyword of `family`, or a well-known
// API name (CUDA/HIP built-ins, torch/triton module names and their members).
bool IsKeptName(std::string_view name, LanguageFamily family);

struct NormalizedSource {
  std::vector<std::string> tokens;
  std::string key;  // hex SHA-256 of the tokens, each followed by '\n'
};

// How renamed identifiers are spelled: numbered by first appearance (v0, v1, ...: the
// exact-duplicate key; declared names only), or all the same "v" with every number
// spelled "0", whatever is declared (n-grams
// that match wherever a fragment sits in a file, whatever sizes it was given:
// decontamination).
enum class RenameStyle { kNumbered, kErased };

NormalizedSource Normalize(std::string_view source, LanguageFamily family,
                           RenameStyle style = RenameStyle::kNumbered);

// The same tokens and key without a string per token: views into the source, into a
// static table of renamed names, or into `spill` (names past the table). Move-only:
// the views stay valid while the object lives.
struct NormalizedView {
  std::vector<std::string_view> tokens;
  std::string key;
  std::deque<std::string> spill;

  NormalizedView() = default;
  NormalizedView(NormalizedView&&) = default;
  NormalizedView& operator=(NormalizedView&&) = default;
};
NormalizedView NormalizeView(std::string_view source, LanguageFamily family,
                             RenameStyle style = RenameStyle::kNumbered);

// 64-bit hashes of the normalised tokens (FNV-1a, then mixed), the input of shingles
// and n-grams.
std::vector<uint64_t> TokenHashes(const std::vector<std::string>& tokens);

// One 64-bit hash of `count` consecutive token hashes starting at `first`.
uint64_t HashWindow(const uint64_t* first, size_t count);

}  // namespace kvault::corpus
