// `kasava ask --answer`: after ranking, sends the best places and the question to a chat model
// and streams its written answer to stdout as it arrives, then lists the places it was given
// (`path:start-end`) so every citation can be checked.
#pragma once

#include <string>
#include <vector>

#include "commands/context.hpp"
#include "commands/exit_status.hpp"
#include "commands/options.hpp"
#include "core/answer/spec.hpp"
#include "core/search/search.hpp"

namespace kasava::commands {

/// The chat model for answers and how to reach it.
struct AnswerSettings {
  answer::ChatModelSpec spec;
  std::string base_url;  ///< "" = the provider's default
  std::string api_key;   ///< "" = none (fine for local OpenAI-compatible servers)
};

/// Resolves the chat model (--answer-model, else the answer_model setting), its base URL and
/// key. Throws util::Failure, saying how to configure one, when no model is set, when the
/// spec is invalid, or when Anthropic's key is missing — before any indexing or searching.
AnswerSettings resolve_answer_settings(const AskCommandOptions& options, Context& context);

/// Streams the answer to `question` from `hits` (best first) to stdout, then the sources.
/// Returns success, no_result (no hit: nothing is sent) or interrupted (Ctrl-C); throws
/// util::Failure when the model cannot answer (after the text that already arrived).
ExitStatus stream_answer(const std::string& question, const std::vector<search::SearchHit>& hits,
                         const AnswerSettings& settings, Context& context);

}  // namespace kasava::commands
