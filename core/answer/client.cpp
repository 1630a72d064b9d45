// Streaming an answer from a chat model (see client.hpp).
#include "core/answer/client.hpp"

#include "core/util/json.hpp"
#include "core/util/strings.hpp"

namespace kasava::answer {

namespace {

constexpr const char* k_anthropic_version = "2023-06-01";
constexpr const char* k_truncated = "the answer stream ended before the model finished";

std::string base_of(const ChatModelSpec& spec, const ChatSettings& settings) {
  std::string base =
      settings.base_url.empty() ? default_base_url(spec.provider) : settings.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

std::string url_of(const ChatModelSpec& spec, const ChatSettings& settings) {
  const std::string base = base_of(spec, settings);
  if (spec.provider == Provider::openai) return base + "/chat/completions";
  // Accept a base written with the version too ("https://host/v1").
  return base + (base.ends_with("/v1") ? "/messages" : "/v1/messages");
}

// "anthropic:claude-x", with " at <base>" when the base URL is not the provider's own.
std::string label_of(const ChatModelSpec& spec, const ChatSettings& settings) {
  std::string label = spec.str();
  if (!settings.base_url.empty() && base_of(spec, settings) != default_base_url(spec.provider))
    label += " at " + net::display_url(base_of(spec, settings));
  return label;
}

std::string describe_status(const ChatModelSpec& spec, const ChatSettings& settings,
                            const net::HttpOutcome& outcome) {
  const std::string label = label_of(spec, settings);
  const int status = outcome.response.status;
  const std::string code = "HTTP " + std::to_string(status);
  const std::string detail = error_detail(outcome.response.body);
  const std::string suffix = detail.empty() ? "" : ": " + detail;
  const char* variable = key_variable(spec.provider);
  if (status == 401 || status == 403) {
    // The server's text is left out: some servers quote the key they were sent.
    if (settings.api_key.empty())
      return label + " requires an API key (" + code + "): set " + variable;
    return label + " rejected the API key (" + code + "); set " + variable + " to a valid key";
  }
  if (status == 404)
    return label + ": " + net::display_url(url_of(spec, settings)) + " not found (" + code +
           "): check the model name '" + spec.model + "' and the base URL" + suffix;
  const std::string attempts =
      outcome.attempts > 1 ? " after " + std::to_string(outcome.attempts) + " attempts" : "";
  if (status == 429) return label + ": rate limited (" + code + ")" + attempts + suffix;
  if (status == 400 || status == 413 || status == 422)
    return label + " rejected the request (" + code + ")" + suffix;
  return label + ": " + code + attempts + suffix;
}

}  // namespace

net::HttpRequest build_chat_request(const ChatModelSpec& spec, const ChatSettings& settings,
                                    const Prompt& prompt) {
  net::HttpRequest request;
  request.url = url_of(spec, settings);
  request.headers = {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}};
  util::JsonWriter body;
  body.begin_object();
  body.key("model").value(spec.model);
  if (spec.provider == Provider::anthropic) {
    if (!settings.api_key.empty()) request.headers.push_back({"x-api-key", settings.api_key});
    request.headers.push_back({"anthropic-version", k_anthropic_version});
    body.key("max_tokens").value(settings.max_tokens);
    body.key("system").value(prompt.system);
    body.key("messages").begin_array();
    body.begin_object().key("role").value("user").key("content").value(prompt.user).end_object();
    body.end_array();
  } else {
    if (!settings.api_key.empty())
      request.headers.push_back({"Authorization", "Bearer " + settings.api_key});
    // No max_tokens: OpenAI's newer models reject it (they want max_completion_tokens), which
    // older compatible servers do not know; the model's own limit applies.
    body.key("messages").begin_array();
    body.begin_object()
        .key("role")
        .value("system")
        .key("content")
        .value(prompt.system)
        .end_object();
    body.begin_object().key("role").value("user").key("content").value(prompt.user).end_object();
    body.end_array();
  }
  body.key("stream").value(true);
  body.end_object();
  request.body = body.str();
  request.timeouts = settings.timeouts;
  request.cancel = settings.cancel;
  return request;
}

AnswerOutcome stream_answer(const ChatModelSpec& spec, const ChatSettings& settings,
                            const Prompt& prompt, const OnText& on_text, net::HttpClient& http) {
  AnswerOutcome result;
  auto clean = [&](std::string message) {
    return util::to_valid_utf8(net::redact(std::move(message), {settings.api_key}));
  };
  if (spec.provider == Provider::anthropic && settings.api_key.empty()) {
    result.error = spec.str() + " needs an API key: set " + key_variable(spec.provider);
    return result;
  }
  if (!settings.base_url.empty() && !settings.base_url.starts_with("http://") &&
      !settings.base_url.starts_with("https://")) {
    result.error = clean("base URL '" + net::display_url(settings.base_url) + "' for " +
                         spec.str() + ": expected http:// or https://");
    return result;
  }

  net::RetryOptions options;
  options.policy = settings.retry;
  if (settings.clock != nullptr) options.clock = settings.clock;
  options.uniform = settings.uniform;
  options.on_retry = settings.on_retry;
  net::RetryingClient retrying(http, std::move(options));

  StreamDecoder decoder(spec.provider);
  std::string decode_error;
  net::HttpRequest request = build_chat_request(spec, settings, prompt);
  request.on_data = [&](std::string_view bytes) {
    if (settings.cancel != nullptr && settings.cancel->load()) return false;
    if (const util::Status status = decoder.feed(bytes, on_text); !status) {
      decode_error = status.error().message;
      return false;
    }
    return !decoder.finished() && !decoder.stopped();  // nothing after the end marker matters
  };
  const net::HttpOutcome outcome = retrying.send(request);

  const std::string label = label_of(spec, settings);
  result.attempts = outcome.attempts;
  result.stop_reason = decoder.stop_reason();
  result.hit_token_limit = decoder.hit_token_limit();
  result.text_bytes = decoder.text_bytes();
  if (!decode_error.empty()) {
    result.error = clean(label + ": " + decode_error);
  } else if (decoder.finished()) {
    result.status = AnswerStatus::complete;
  } else if ((settings.cancel != nullptr && settings.cancel->load()) || decoder.stopped() ||
             outcome.failure == net::FailureKind::cancelled) {
    result.status = AnswerStatus::cancelled;
  } else if (!outcome.has_response()) {
    result.error =
        clean(outcome.streamed_bytes > 0 ? label + ": " + k_truncated + " (" + outcome.error + ")"
                                         : label + ": " + outcome.error);
  } else if (outcome.response.status < 200 || outcome.response.status > 299) {
    result.error = clean(describe_status(spec, settings, outcome));
  } else if (spec.provider == Provider::openai && decoder.saw_finish_reason()) {
    // A compatible server that ends a clean transfer after finish_reason without [DONE].
    result.status = AnswerStatus::complete;
  } else {
    const std::string type = outcome.response.header("content-type").value_or("");
    if (outcome.streamed_bytes == 0 ||
        util::to_lower(type).starts_with("text/event-stream") || type.empty()) {
      result.error = clean(label + ": " + k_truncated);
    } else {
      result.error = clean(label + ": expected an event stream (text/event-stream), got '" +
                           util::to_valid_utf8(type.substr(0, 100)) +
                           "': does the server support \"stream\": true?");
    }
  }
  return result;
}

}  // namespace kasava::answer
