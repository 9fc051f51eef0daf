#pragma once
// Feedback for the next prompt (docs/agent.md, "Feedback"): what the engine found
// about a candidate, within character limits, as an `<execution_result>` JSON block
// followed by the compiler output or traceback and the per-case mismatch details.
//
//   std::string text = FormatFeedback(record, FeedbackLimits{});   // <= limits.total
//
// Pure; thread-safe.
#include <cstddef>
#include <string>
#include <string_view>

#include "store/store.h"

namespace kvault::agent {

struct FeedbackLimits {
  size_t total = 6000;        // Default: 6000 characters for the whole feedback
  size_t message = 800;       // Default: 800 for the one-line message
  size_t diagnostics = 3000;  // Default: 3000 for compiler output / traceback
  size_t max_cases = 4;       // Default: 4 failing or timed cases listed
};

// `text` if it fits in `limit` characters, else its head and tail around a marker
// "[... N characters cut ...]", together exactly `limit` characters or fewer.
// Cuts never split a UTF-8 sequence.
std::string Truncate(std::string_view text, size_t limit);

// The engine's verdict on a verified candidate.
std::string FormatFeedback(const AttemptRecord& attempt, const FeedbackLimits& limits);

// Feedback for an answer from which no candidate could be taken (`why` is the
// parser's or splicer's message, written for the model).
std::string FormatNoCode(std::string_view why, const FeedbackLimits& limits);

}  // namespace kvault::agent
