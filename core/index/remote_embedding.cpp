// Remote embedding in an index run: cached vectors first, the rest sent at once (the
// embedder batches and parallelises), failures kept as pending for the next run.
#include "core/index/remote_embedding.hpp"

#include <algorithm>
#include <string>
#include <string_view>

#include "core/embed/model.hpp"
#include "core/index/writer.hpp"

namespace kasava::index {
namespace {

// Pending chunks of earlier runs embedded again per transaction at the end of a run.
constexpr int k_pending_batch = 512;

// Texts to embed with a remote embedder, and where each vector goes.
struct RemoteInputs {
  std::vector<std::string> texts;
  std::vector<store::QuantizedVector*> targets;
  std::vector<std::string> places;  // "path:start-end" of each chunk, for messages

  void add(std::string_view path, const types::Chunk& chunk, store::QuantizedVector* target) {
    texts.push_back(embed::embedding_input(path, chunk));
    targets.push_back(target);
    places.push_back(std::string(path) + ":" + std::to_string(chunk.start_line) + "-" +
                     std::to_string(chunk.end_line));
  }
};

// Embeds `inputs` with a remote embedder: vector cache first, then the service for the rest
// (all at once: the embedder batches and parallelises). Chunks that fail keep an empty
// vector (stored as pending). A dry run only counts what it would send.
void embed_remote(RemoteInputs& inputs, const IndexOptions& options, IndexSummary::Embedding& tally,
                  std::size_t& embedded) {
  if (inputs.texts.empty()) return;
  embed::Embedder& embedder = *options.embedder;
  const std::string model = embedder.model_id();
  const std::vector<std::string_view> views(inputs.texts.begin(), inputs.texts.end());
  std::vector<std::size_t> misses;
  if (options.vector_cache != nullptr) {
    auto cached = options.vector_cache->get(model, views, embedder.dimensions());
    for (std::size_t i = 0; i < views.size(); ++i) {
      // A dry run may not know the model's vector length yet (it learns it from a request).
      if (i < cached.size() && cached[i] &&
          (embedder.dimensions() == 0 ||
           static_cast<int>(cached[i]->values.size()) == embedder.dimensions())) {
        *inputs.targets[i] = std::move(*cached[i]);
        ++tally.cached;
      } else {
        misses.push_back(i);
      }
    }
  } else {
    for (std::size_t i = 0; i < views.size(); ++i) misses.push_back(i);
  }
  if (misses.empty()) return;
  std::vector<std::string_view> to_send;
  to_send.reserve(misses.size());
  for (const std::size_t i : misses) to_send.push_back(views[i]);
  if (options.dry_run) {
    tally.would_send += to_send.size();
    for (const auto text : to_send) tally.estimated_tokens += (text.size() + 3) / 4;
    return;
  }
  embed::EmbedReport report = embedder.embed_partial(to_send, embed::InputKind::document);
  std::vector<std::string_view> fresh_inputs;
  std::vector<store::QuantizedVector> fresh;
  for (std::size_t k = 0; k < misses.size(); ++k) {
    if (k >= report.vectors.size()) break;
    const auto& vector = report.vectors[k];
    if (vector.empty()) continue;
    if (static_cast<int>(vector.size()) != embedder.dimensions()) {
      if (tally.first_error.empty()) {
        tally.first_error = "the model returned a vector of " + std::to_string(vector.size()) +
                            " dimensions, not " + std::to_string(embedder.dimensions());
      }
      continue;
    }
    *inputs.targets[misses[k]] = store::quantize(vector);
    ++embedded;
    fresh_inputs.push_back(to_send[k]);
    fresh.push_back(*inputs.targets[misses[k]]);
  }
  for (const embed::EmbedFailure& failure : report.failures) {
    // A bad key or model fails every chunk the same way: stop, say why (what was committed
    // stays), rather than store a whole index of pending chunks.
    if (failure.permanent)
      throw util::Failure("embedding with model '" + model + "': " + failure.message);
  }
  if (!report.failures.empty() && tally.first_error.empty()) {
    // A service that rejects one input (too long for it, say) names an index within the
    // request: say which chunk that is.
    const embed::EmbedFailure& first = report.failures.front();
    tally.first_error = first.end - first.begin == 1 && first.begin < misses.size()
                            ? inputs.places[misses[first.begin]] + ": " + first.message
                            : first.message;
  }
  if (options.vector_cache != nullptr && !fresh.empty()) {
    // A cache that cannot be written costs a second payment later, not this run.
    auto cached = options.vector_cache->put(model, fresh_inputs, fresh);
    if (!cached && tally.cache_error.empty()) tally.cache_error = cached.error().message;
  }
}

}  // namespace

void embed_window_remotely(std::vector<Work>& work, const IndexOptions& options,
                           IndexSummary::Embedding& tally) {
  RemoteInputs inputs;
  for (Work& item : work) {
    if (!item.read || !item.read_error.empty() || item.unchanged || !item.skip_reason.empty() ||
        item.chunks.empty()) {
      continue;
    }
    item.vectors.assign(item.chunks.size(), store::QuantizedVector{});
    for (std::size_t i = 0; i < item.chunks.size(); ++i) {
      inputs.add(item.entry->path, item.chunks[i], &item.vectors[i]);
    }
  }
  std::size_t embedded = 0;
  embed_remote(inputs, options, tally, embedded);
  tally.sent += embedded;
}

bool embed_pending(store::Store& store, const IndexOptions& options, std::int64_t last_id,
                   IndexSummary::Embedding& tally, const IndexCallbacks& callbacks,
                   std::size_t& stored) {
  std::int64_t after = 0;
  for (;;) {
    if (callbacks.cancelled && callbacks.cancelled()) return false;
    std::vector<store::ChunkRecord> chunks = store.pending_chunks(after, k_pending_batch);
    while (!chunks.empty() && chunks.back().id > last_id) chunks.pop_back();
    if (chunks.empty()) return true;
    after = chunks.back().id;
    std::vector<store::QuantizedVector> vectors(chunks.size());
    RemoteInputs inputs;
    std::vector<std::int64_t> ids;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      inputs.add(chunks[i].path, chunks[i].chunk, &vectors[i]);
      ids.push_back(chunks[i].id);
    }
    std::size_t embedded = 0;
    embed_remote(inputs, options, tally, embedded);
    tally.retried += embedded;
    if (options.dry_run) continue;
    stored += static_cast<std::size_t>(std::count_if(
        vectors.begin(), vectors.end(), [](const auto& v) { return !v.values.empty(); }));
    Transaction transaction(store);
    store.put_vectors(ids, vectors);
    transaction.commit();
  }
}

}  // namespace kasava::index
