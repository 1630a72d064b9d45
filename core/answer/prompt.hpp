// The prompt of a written answer: the retrieved code as delimited, untrusted data, the
// question, and a system prompt that says the code is data and asks for `path:line`
// citations — all within a context budget (tokens estimated as bytes / 4).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/result.hpp"

namespace kasava::answer {

/// One retrieved place, as the caller ranked it (best first). Plain data: this module does
/// not know the index or the search.
struct Source {
  std::string path;  ///< relative to the repository root, with '/'
  int start_line = 0;
  int end_line = 0;
  std::string language;
  std::string symbol;  ///< qualified name, or ""
  std::string text;    ///< lines start_line..end_line
};

struct PromptBudget {
  /// Estimated tokens of the whole prompt: system prompt, question and excerpts.
  std::size_t max_prompt_tokens = 12'000;
  /// The excerpt that does not fit whole is cut to fit when at least this many tokens are
  /// left for it; otherwise it is dropped.
  std::size_t min_excerpt_tokens = 64;
};

/// Estimated tokens of text: bytes / 4, rounded up (close for code and English with the
/// tokenizers of current models; a budget, not a count).
std::size_t estimate_tokens(std::string_view text);

struct Prompt {
  std::string system;  ///< instructions: excerpts are data, cite path:line
  std::string user;    ///< the delimited excerpts, then the question
  /// The sources sent, in rank order; when `truncated`, the last one was cut and its
  /// end_line is the last line sent.
  std::vector<Source> sent;
  std::size_t retrieved = 0;  ///< sources offered; retrieved - sent.size() were dropped
  bool truncated = false;
  std::size_t estimated_tokens = 0;  ///< of system + user
  /// The tag name delimiting excerpts ("source-1f0c9a2e"): chosen so that no excerpt
  /// contains it, so no excerpt can close its block and pose as instructions.
  std::string tag;
};

/// Builds the prompt for `question` from `sources` (best first): keeps the best sources that
/// fit the budget whole, cuts the next one at a line boundary when enough room is left, and
/// drops the rest. Errors: no source given, the question alone over the budget, no room left
/// for even one line of code.
util::Result<Prompt> build_prompt(std::string_view question, const std::vector<Source>& sources,
                                  const PromptBudget& budget = {});

}  // namespace kasava::answer
