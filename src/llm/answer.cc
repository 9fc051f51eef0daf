#include "llm/answer.h"

#include <array>

#include "llm/code_fences.h"
#include "util/json_parse.h"
#include "util/strings.h"

namespace kvault::llm {
namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kAnswerOpen = "<answer>";
constexpr std::string_view kAnswerClose = "</answer>";

constexpr std::array<std::string_view, 11> kCFamily = {"c",  "cpp", "c++", "cc", "cxx", "cu",
                                                       "cuda", "hip", "h",  "hpp", "cuh"};
constexpr std::array<std::string_view, 4> kPythonFamily = {"python", "py", "python3", "triton"};

std::string_view FamilyOf(std::string_view tag) {
  for (auto t : kCFamily) {
    if (t == tag) return "C++/CUDA/HIP";
  }
  for (auto t : kPythonFamily) {
    if (t == tag) return "Python";
  }
  return "";
}

bool TagFits(std::string_view tag, std::string_view expected) {
  if (tag.empty() || expected.empty()) return true;
  std::string_view want = FamilyOf(expected);
  return want.empty() ? tag == expected : FamilyOf(tag) == want;
}

// The instruction that ends every failure message, naming the tag to use.
std::string HowToReply(const ExtractOptions& options) {
  return " Reply with exactly one fenced code block (```" + options.expected_language +
         " ... ```) holding the complete source, and no other code block.";
}

Error Fail(const std::string& what, const ExtractOptions& options) {
  return Error{what + HowToReply(options)};
}

size_t Count(std::string_view text, std::string_view needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Drops leading blank lines and trailing whitespace; the result ends with one '\n'
// unless it is empty.
std::string Tidy(std::string_view code) {
  size_t start = 0;
  while (true) {
    size_t nl = code.find('\n', start);
    if (nl == std::string_view::npos || !Trim(code.substr(start, nl - start)).empty()) break;
    start = nl + 1;
  }
  std::string_view rest = code.substr(start);
  std::string_view trimmed = Trim(rest);
  if (trimmed.empty()) return "";
  // keep the first line's indentation: cut only at the end
  std::string out(rest.substr(0, trimmed.data() + trimmed.size() - rest.data()));
  out.push_back('\n');
  return out;
}

Result<ExtractedCode> Finish(std::string_view raw, CodeSource source, std::string language,
                             const ExtractOptions& options) {
  if (!TagFits(language, options.expected_language)) {
    return Fail("Your code block is tagged '" + language + "' but " + options.expected_language +
                    " source was asked for.",
                options);
  }
  std::string code = Tidy(raw);
  if (code.empty()) {
    return Fail(source == CodeSource::kFencedBlock ? "Your code block was empty."
                                                   : "Your answer held no code (it was empty).",
                options);
  }
  if (code.size() > options.max_code_bytes) {
    return Fail("Your code is " + std::to_string(code.size()) + " bytes, over the limit of " +
                    std::to_string(options.max_code_bytes) + " bytes; write a shorter source.",
                options);
  }
  return ExtractedCode{std::move(code), source, std::move(language)};
}

std::string BlockCountProblem(size_t n, std::string_view where) {
  return "Your answer had " + std::to_string(n) + " code blocks" + std::string(where) + ".";
}

// The inside of an <answer> region or a JSON "code" string: one fenced block, or code.
Result<ExtractedCode> FromRegion(std::string_view text, CodeSource source, const ExtractOptions& options) {
  std::string_view where = source == CodeSource::kJson ? " in its \"code\" field" : " inside <answer>";
  FenceScan scan = ScanFences(text);
  if (scan.unterminated_line) {
    return Fail("Your answer opens a code fence" + std::string(where) +
                    " that is never closed (was the answer cut off?).",
                options);
  }
  if (scan.blocks.size() > 1) return Fail(BlockCountProblem(scan.blocks.size(), where), options);
  if (scan.blocks.size() == 1) {
    return Finish(scan.blocks[0].code, source, std::move(scan.blocks[0].language), options);
  }
  return Finish(text, source, "", options);
}

Result<ExtractedCode> FromJson(std::string_view text, const ExtractOptions& options) {
  auto json = ParseJson(text, 64);
  if (!json) {
    return Fail("Your answer looks like a JSON object but is not valid JSON (" + json.error() + ").",
                options);
  }
  auto code = json->find("code");
  if (!json->is_object() || code == json->end() || !code->is_string()) {
    return Fail("Your JSON answer has no string field \"code\".", options);
  }
  return FromRegion(code->get_ref<const std::string&>(), CodeSource::kJson, options);
}

bool HasFence(std::string_view text) {
  FenceScan scan = ScanFences(text);
  return !scan.blocks.empty() || scan.unterminated_line.has_value();
}

}  // namespace

std::string_view ToString(CodeSource s) {
  switch (s) {
    case CodeSource::kFencedBlock: return "fenced_block";
    case CodeSource::kAnswerTag: return "answer_tag";
    case CodeSource::kJson: return "json";
  }
  return "unknown";
}

Result<ExtractedCode> ExtractCode(std::string_view answer, const ExtractOptions& options) {
  std::string_view rest = answer;
  if (size_t close = rest.rfind(kThinkClose); close != std::string_view::npos) {
    rest = rest.substr(close + kThinkClose.size());
  }
  if (rest.find(kThinkOpen) != std::string_view::npos) {
    return Fail("Your answer opened <think> and never closed it with </think>, so no answer "
                "followed the reasoning.",
                options);
  }
  std::string_view body = Trim(rest);
  if (body.empty()) return Fail("Your answer was empty (nothing after the reasoning).", options);
  if (body.front() == '{') return FromJson(body, options);

  size_t opens = Count(rest, kAnswerOpen), closes = Count(rest, kAnswerClose);
  if (opens > 0 || closes > 0) {
    if (opens != 1 || closes != 1) {
      return Fail("Your answer had " + std::to_string(opens) + " <answer> and " + std::to_string(closes) +
                      " </answer> tags; use at most one <answer>...</answer> region.",
                  options);
    }
    size_t open = rest.find(kAnswerOpen), close = rest.find(kAnswerClose);
    if (close < open) return Fail("Your answer put </answer> before <answer>.", options);
    if (HasFence(rest.substr(0, open)) || HasFence(rest.substr(close + kAnswerClose.size()))) {
      return Fail("Your answer had a code block outside its <answer> region; put the code in one "
                  "place only.",
                  options);
    }
    size_t inner = open + kAnswerOpen.size();
    return FromRegion(rest.substr(inner, close - inner), CodeSource::kAnswerTag, options);
  }

  FenceScan scan = ScanFences(rest);
  if (scan.unterminated_line) {
    return Fail("Your answer opens a code fence that is never closed (was the answer cut off?).",
                options);
  }
  if (scan.blocks.empty()) return Fail("Your answer had no code block.", options);
  if (scan.blocks.size() > 1) return Fail(BlockCountProblem(scan.blocks.size(), ""), options);
  return Finish(scan.blocks[0].code, CodeSource::kFencedBlock, std::move(scan.blocks[0].language),
                options);
}

}  // namespace kvault::llm
