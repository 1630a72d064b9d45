// `kasava ask --answer` (see answer.hpp): hits → answer::Source → a prompt within the context
// budget → the chat model's streamed answer, each piece flushed to stdout as it arrives →
// the list of sources sent. Ctrl-C cancels the request through the interrupt flag.
#include "commands/answer.hpp"

#include <cstdio>
#include <cstdlib>

#include "commands/interrupt.hpp"
#include "core/answer/client.hpp"
#include "core/answer/prompt.hpp"
#include "core/net/curl_client.hpp"
#include "core/util/strings.hpp"

namespace kasava::commands {

namespace {

std::vector<answer::Source> sources_of(const std::vector<search::SearchHit>& hits) {
  std::vector<answer::Source> sources;
  sources.reserve(hits.size());
  for (const search::SearchHit& hit : hits) {
    const auto& chunk = hit.record.chunk;
    sources.push_back({hit.record.path, chunk.start_line, chunk.end_line, hit.record.language,
                       chunk.symbol.empty() ? std::string() : search::qualified_name(hit.record),
                       chunk.text});
  }
  return sources;
}

std::string sources_text(const answer::Prompt& prompt, const Output& output) {
  std::string text = "\nSources";
  if (prompt.sent.size() < prompt.retrieved)
    text += " (" + std::to_string(prompt.sent.size()) + " of " + std::to_string(prompt.retrieved) +
            " places; the others did not fit the context budget)";
  text += ":\n";
  for (std::size_t i = 0; i < prompt.sent.size(); ++i) {
    const answer::Source& source = prompt.sent[i];
    text += "  " + output.paint(util::escape_controls(source.path), Style::path) + ":" +
            std::to_string(source.start_line) + "-" + std::to_string(source.end_line);
    if (!source.symbol.empty())
      text += "  " + output.paint(util::escape_controls(source.symbol), Style::symbol);
    if (prompt.truncated && i + 1 == prompt.sent.size()) text += "  (cut to fit)";
    text += "\n";
  }
  return text;
}

}  // namespace

// Which chat model answers and how to reach it: --answer-model, else the answer_model
// setting (KASAVA_ANSWER_MODEL, the repository's or the user's config), with the base URL
// settings; keys from the environment only.
AnswerSettings resolve_answer_settings(const AskCommandOptions& options, Context& context) {
  const Settings& settings = context.settings();
  Setting model = settings.answer_model;
  if (!options.answer_model.empty()) model = Setting{options.answer_model, Origin::flag, "--answer-model"};
  if (util::trim(model.value).empty())
    throw util::Failure(
        "--answer needs a chat model: pass --answer-model anthropic:<model> or openai:<model> "
        "(e.g. --answer-model anthropic:claude-sonnet-4-5), set KASAVA_ANSWER_MODEL, or put "
        "answer_model = ... in .kasava/config or ~/.config/kasava/config");
  auto spec = answer::parse_chat_model_spec(model.value);
  if (!spec) throw util::Failure("invalid answer model (from " + model.source + "): " + spec.error().message);

  AnswerSettings answer_settings;
  answer_settings.spec = *spec;
  const bool anthropic = spec->provider == answer::Provider::anthropic;
  answer_settings.base_url =
      anthropic ? settings.anthropic_base_url.value : settings.openai_base_url.value;
  answer_settings.api_key = environment(answer::key_variable(spec->provider));
  if (anthropic && answer_settings.api_key.empty())
    throw util::Failure(spec->str() + " needs an API key: set " +
                        answer::key_variable(spec->provider));
  return answer_settings;
}

ExitStatus stream_answer(const std::string& question, const std::vector<search::SearchHit>& hits,
                         const AnswerSettings& settings, Context& context) {
  Output& output = context.output;
  if (hits.empty()) {
    output.warning("no code matched the question: no answer was requested");
    return ExitStatus::no_result;
  }
  const answer::Prompt prompt = answer::build_prompt(question, sources_of(hits)).value_or_throw();

  answer::ChatSettings chat;
  chat.base_url = settings.base_url;
  chat.api_key = settings.api_key;
  chat.cancel = &interrupt_flag();
  const std::string model = settings.spec.str();
  chat.on_retry = [&output, &model](const net::RetryEvent& event) {
    char delay[32];
    std::snprintf(delay, sizeof delay, "%.1f", static_cast<double>(event.delay.count()) / 1000.0);
    const std::string what = event.status != 0 ? "HTTP " + std::to_string(event.status)
                                               : std::string(net::failure_kind_name(event.failure));
    output.warning(model + ": " + what + ", retrying in " + delay + " s");
  };

  bool ends_with_newline = true;
  auto on_text = [&](std::string_view piece) {
    // The model may repeat what the code holds: its control characters are shown, not obeyed.
    output.out(util::escape_controls(piece, util::LineBreaks::keep));
    ends_with_newline = piece.back() == '\n';
    return output.flush();  // false when stdout is gone: stop asking for more
  };
  const auto http = net::make_curl_client();
  const answer::AnswerOutcome outcome =
      answer::stream_answer(settings.spec, chat, prompt, on_text, *http);
  if (!ends_with_newline) output.out("\n");

  if (outcome.status == answer::AnswerStatus::cancelled) {
    if (!interrupted()) return ExitStatus::success;  // stdout closed: quietly, as ask does
    output.flush();
    output.warning("interrupted: the answer is incomplete");
    return interrupted_status();
  }
  // The sources follow any text that arrived, even a partial answer, so its citations can be
  // checked; an exchange that failed before the first word shows only the error.
  if (outcome.text_bytes > 0 || outcome.status == answer::AnswerStatus::complete)
    output.out(sources_text(prompt, output));
  output.flush();
  if (outcome.status == answer::AnswerStatus::failed) throw util::Failure(outcome.error);
  if (outcome.text_bytes == 0) output.warning(model + " returned an empty answer");
  if (outcome.hit_token_limit)
    output.warning("the answer reached the model's output limit and is cut short");
  return ExitStatus::success;
}

}  // namespace kasava::commands
