// The embedding model in use, made from the settings, and the embedder a query on a given
// index needs (see embedder_setup.hpp).
#include "commands/embedder_setup.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "commands/interrupt.hpp"
#include "core/embed/model.hpp"
#include "core/index/indexer.hpp"
#include "core/remote/embedder.hpp"
#include "core/util/files.hpp"
#include "core/util/json.hpp"
#include "core/util/strings.hpp"

namespace kasava::commands {

namespace fs = std::filesystem;

namespace {

// " (from KASAVA_MODEL)": where a setting came from, for errors about its value.
std::string from(const Setting& setting) {
  return setting.origin == Origin::default_value ? "" : " (from " + setting.source + ")";
}

// A setting that must hold a number in [low, high]; nullopt when unset.
std::optional<double> number_setting(const Setting& setting, const char* name, double low,
                                     double high) {
  if (!setting.is_set()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double value = std::stod(setting.value, &used);
    if (used == setting.value.size() && value >= low && value <= high) return value;
  } catch (const std::exception&) {  // reported below
  }
  char range[64];
  std::snprintf(range, sizeof range, "a number from %g to %g", low, high);
  throw util::Failure("invalid " + std::string(name) + " '" + setting.value + "'" + from(setting) +
                      ": expected " + range);
}

bool is_model_file(const std::string& value) {
  return value.ends_with(".kmodel") || value.find('/') != std::string::npos;
}

} // namespace

bool names_remote_model(std::string_view value) {
  return value.starts_with("voyage:") || value.starts_with("openai:");
}

// The embedder the model setting names: see Context::embedder().
std::unique_ptr<embed::Embedder> make_embedder(const Settings& settings) {
  const Setting& model = settings.model;
  if (model.value == "builtin") return embed::make_model_embedder(embed::builtin_model());
  if (is_model_file(model.value)) {
    const std::string path = util::absolute_path(model.value);
    if (!fs::is_regular_file(path)) {
      throw util::Failure("loading model '" + model.value + "'" + from(model) +
                          ": no such file (a model is builtin, voyage:<model>, openai:<model> "
                          "or a .kmodel file)");
    }
    return embed::make_model_embedder(embed::load_model_file(path).value_or_throw());
  }
  // An index's id of a remote model carries its output dimension: "voyage:voyage-code-3@512".
  std::string text = model.value;
  std::optional<int> output_dimension;
  if (const auto at = text.rfind('@'); at != std::string::npos && text.find(':') < at) {
    try {
      output_dimension = std::stoi(text.substr(at + 1));
    } catch (const std::exception&) {
      throw util::Failure("model '" + model.value + "'" + from(model) +
                          ": expected a number of dimensions after '@'");
    }
    text.resize(at);
  }
  auto spec = remote::parse_model_spec(text);
  if (!spec) throw util::Failure(spec.error().message + from(model));
  if (!spec->is_remote()) return embed::make_model_embedder(embed::builtin_model());

  remote::RemoteSettings remote_settings;
  remote_settings.base_url = spec->provider == remote::Provider::voyage
                                 ? settings.voyage_base_url.value
                                 : settings.openai_base_url.value;
  remote_settings.api_key = environment(remote::key_variable(spec->provider));
  if (const auto dims = number_setting(settings.dimensions, "dimensions", 1, 65536);
      dims && !output_dimension) {
    output_dimension = static_cast<int>(*dims);
  }
  remote_settings.output_dimension = output_dimension;
  if (settings.output_dtype.is_set()) {
    if (spec->provider != remote::Provider::voyage) {
      throw util::Failure("output_dtype '" + settings.output_dtype.value + "'" +
                          from(settings.output_dtype) + " applies to voyage: models only");
    }
    remote_settings.output_dtype = settings.output_dtype.value;
  }
  if (const auto retries = number_setting(settings.retries, "retries", 0, 20)) {
    remote_settings.retry.max_attempts = 1 + static_cast<int>(*retries);
  }
  if (const auto parallel = number_setting(settings.parallel_requests, "parallel_requests", 1, 64)) {
    remote_settings.max_parallel_requests = static_cast<int>(*parallel);
  }
  if (const auto rate = number_setting(settings.rate_limit, "rate_limit", 0.01, 10000)) {
    remote_settings.requests_per_second = *rate;
  }
  remote_settings.cancel = &interrupt_flag();
  auto made = remote::make_remote_embedder(*spec, std::move(remote_settings));
  if (!made) throw util::Failure(made.error().message + from(model));
  return std::move(made).value();
}

embed::Embedder* embedder_for_query(Context& context, const store::Store& store,
                                    search::Mode mode) {
  // A model chosen by the user must be sound even when this query does not need it.
  const Origin origin = context.settings().model.origin;
  if (origin != Origin::default_value && origin != Origin::index && !context.model_is_remote()) {
    context.embedder();
  }
  const std::string stamped = index::index_model(store);
  if (mode == search::Mode::lexical || stamped.empty()) return nullptr;
  if (origin == Origin::default_value && stamped == context.unadopted_index_model()) {
    const std::string why = "index '" + store.path() + "' was built with model '" +
                            util::escape_controls(stamped) +
                            "' and does not belong to this repository";
    if (mode == search::Mode::semantic) {
      throw util::Failure(why + ": choose its model (--model or KASAVA_MODEL) to search it by "
                                "meaning, or use --mode lexical");
    }
    context.warn_once(why + ": searching by words only (choose its model with --model or "
                            "KASAVA_MODEL to search by meaning)");
    return nullptr;
  }
  return &context.embedder();
}

namespace {

// Hidden settings for tuning runs (bench/quality.py, tools/rank/fit-ranker):
// KASAVA_RANKER=FILE ranks with FILE's weights (models/ranker.tsv's format) instead of the
// built-in ones; KASAVA_HYBRID_WEIGHT=W, a number in [0, 1], sets the blend of the lexical and
// semantic features to 1 − W and W (anything else is ignored); KASAVA_RANK_FEATURES=FILE
// appends one JSON line per hybrid search to FILE: the query and every candidate's features.
std::optional<search::Ranker> tuning_ranker() {
  std::optional<search::Ranker> ranker;
  if (const std::string file = environment("KASAVA_RANKER"); !file.empty()) {
    const auto text = util::read_file(file);
    if (!text) throw util::Failure("KASAVA_RANKER: " + text.error().message);
    auto parsed = search::parse_ranker(*text);
    if (!parsed) throw util::Failure("KASAVA_RANKER '" + file + "': " + parsed.error().message);
    ranker = *parsed;
  }
  if (const std::string text = environment("KASAVA_HYBRID_WEIGHT"); !text.empty()) {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (*end == '\0' && value >= 0.0 && value <= 1.0) {
      if (!ranker) ranker = search::built_in_ranker();
      (*ranker)[search::Feature::semantic] = value;
      (*ranker)[search::Feature::lexical] = 1.0 - value;
    }
  }
  return ranker;
}

void append_rank_features(const std::string& file, const std::string& query,
                          const std::vector<search::RankedCandidate>& candidates) {
  util::JsonWriter json;
  json.begin_object();
  json.key("query").value(query);
  json.key("candidates").begin_array();
  for (const auto& c : candidates) {
    json.begin_array().value(c.path).value(c.start_line).value(c.exact ? 1 : 0);
    for (const double f : c.features) json.value(f);
    json.end_array();
  }
  json.end_array();
  json.end_object();
  std::FILE* out = std::fopen(file.c_str(), "a");
  if (out == nullptr) throw util::Failure("KASAVA_RANK_FEATURES '" + file + "': cannot append");
  const std::string line = json.str() + "\n";
  std::fwrite(line.data(), 1, line.size(), out);
  std::fclose(out);
}

} // namespace

util::Result<std::vector<search::SearchHit>> run_search(Context& context, const store::Store& store,
                                                        search::SearchOptions options) {
  const auto ranker = tuning_ranker();
  if (ranker) options.ranker = &*ranker;
  const std::string features_file = environment("KASAVA_RANK_FEATURES");
  std::vector<search::RankedCandidate> candidates;
  if (!features_file.empty()) options.candidates_out = &candidates;
  embed::Embedder* embedder = embedder_for_query(context, store, options.mode);
  const store::Store::ReadSnapshot snapshot(store);
  auto found = search::search(store, options, embedder);
  if (!found && options.mode == search::Mode::hybrid && embedder != nullptr &&
      embedder->locality() == embed::Locality::remote && !interrupted()) {
    context.output.warning("searching by meaning failed, so results are by words only: " +
                           found.error().message);
    options.mode = search::Mode::lexical;
    found = search::search(store, options, nullptr);
  }
  if (found && !features_file.empty()) append_rank_features(features_file, options.query, candidates);
  return found;
}

} // namespace kasava::commands
