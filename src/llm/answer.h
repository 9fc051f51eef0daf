#pragma once
// Fail-closed extraction of the code from an LLM's answer (docs/llm-servers.md, "Answer parsing").
//
//   ExtractOptions opts{.expected_language = "hip"};
//   Result<ExtractedCode> code = ExtractCode(response.content, opts);
//   if (!code) -> a parse failure; code.error() is written to be sent back to the model
//                 ("Your answer had 2 code blocks; reply with exactly one ...")
//
// Rules, in order:
//   1. Everything up to and including the last `</think>` is dropped; a `<think>` that
//      is left after that (never closed) is a failure.
//   2. What remains must hold exactly one of:
//      - a JSON object as the whole answer, with a string field "code";
//      - one `<answer>...</answer>` region (and no code fence outside it);
//      - one fenced code block (``` or ~~~, at least three, optional language tag).
//      The JSON "code" string and the <answer> region may themselves hold exactly one
//      fenced block, which is then unwrapped; otherwise they are the code as is.
//   3. Zero or several blocks, several regions, a fence that is never closed, a
//      language tag that contradicts the expected language, empty code, or code over
//      the size cap: each a failure. Nothing is guessed.
// Pure functions; thread-safe.
#include <cstddef>
#include <string>
#include <string_view>

#include "util/result.h"

namespace kvault::llm {

enum class CodeSource {
  kFencedBlock,  // one ``` / ~~~ block
  kAnswerTag,    // one <answer>...</answer> region
  kJson,         // a whole-answer JSON object's "code" string
};
std::string_view ToString(CodeSource s);  // "fenced_block" | "answer_tag" | "json"

struct ExtractedCode {
  std::string code;            // ends with one '\n'
  CodeSource source = CodeSource::kFencedBlock;
  std::string fence_language;  // the block's tag, lower case ("" when untagged or none)
};

struct ExtractOptions {
  // The language asked for: "cpp", "cuda", "hip" (one family: a block tagged c, cpp,
  // c++, cc, cxx, cu, cuda, hip, h, hpp or cuh fits any of them) or "python" / "triton"
  // (python, py, python3, triton). Default: "" (any tag is accepted). An untagged block
  // always fits; a tagged one outside the family is a failure.
  std::string expected_language;
  // Default: 256 KiB. Longer code is a failure.
  size_t max_code_bytes = 256 * 1024;
};

Result<ExtractedCode> ExtractCode(std::string_view answer, const ExtractOptions& options);

}  // namespace kvault::llm
