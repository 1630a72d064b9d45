// Reading, checking, chunking and embedding the files of a window on all threads, and the
// skip rules that keep secrets, binaries, minified and generated files out of an index.
#include "core/index/file_work.hpp"

#include <algorithm>
#include <atomic>
#include <iterator>

#include "core/embed/model.hpp"
#include "core/index/indexer.hpp"
#include "core/util/parallel.hpp"
#include "core/util/secrets.hpp"

namespace kasava::index {
namespace {

// Files at least this large are processed by one thread only, the calling one. tree-sitter's
// syntax tree takes 45 to 70 bytes per byte of source (1 MB C and Python files: 44 and 69 MB),
// so two of the largest files (1 MiB, --max-file-size) parsed at once would take ~140 MB, and
// each thread's allocator arena keeps what it once held: large trees on two threads cost twice
// even when never at the same time.
constexpr std::uint64_t k_large_file_bytes = 256 * 1024;
// Bytes at the start of a file searched for a NUL byte, as git does to call a file binary.
constexpr std::size_t k_binary_probe_bytes = 8000;
// Lines longer than this mean minified or generated code, not something a person wrote.
constexpr std::size_t k_max_line_length = 5000;
constexpr std::size_t k_max_average_line_length = 300;

// Files produced by tools, whose content answers no question about the code.
bool is_generated_name(std::string_view path) {
  const auto slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  static constexpr std::string_view k_names[] = {
      "package-lock.json", "yarn.lock",    "pnpm-lock.yaml", "Cargo.lock",   "go.sum",
      "poetry.lock",       "Pipfile.lock", "composer.lock",  "Gemfile.lock", "npm-shrinkwrap.json"};
  return std::find(std::begin(k_names), std::end(k_names), name) != std::end(k_names);
}

// Embeds the chunks of one file (on a worker thread) into item.vectors.
void embed_chunks(Work& item, embed::Embedder& embedder) {
  if (item.chunks.empty()) return;
  std::vector<std::string> inputs;
  inputs.reserve(item.chunks.size());
  for (const auto& chunk : item.chunks)
    inputs.push_back(embed::embedding_input(item.entry->path, chunk));
  const std::vector<std::string_view> views(inputs.begin(), inputs.end());
  auto vectors = embedder.embed(views, embed::InputKind::document);
  if (!vectors)
    throw util::Failure("embedding '" + item.entry->path + "': " + vectors.error().message);
  if (vectors->size() != item.chunks.size()) {
    throw util::Failure("embedding '" + item.entry->path + "': the model returned " +
                        std::to_string(vectors->size()) + " vectors for " +
                        std::to_string(item.chunks.size()) + " chunks");
  }
  item.vectors.reserve(vectors->size());
  for (const auto& vector : *vectors) {
    if (static_cast<int>(vector.size()) != embedder.dimensions()) {
      throw util::Failure("embedding '" + item.entry->path + "': the model returned a vector of " +
                          std::to_string(vector.size()) + " dimensions, not " +
                          std::to_string(embedder.dimensions()));
    }
    item.vectors.push_back(store::quantize(vector));
  }
}

// Reads, checks, chunks, embeds and packs one item (on a worker thread).
void process(Work& item, repo::Source& source, parse::Chunker& chunker, embed::Embedder* embedder,
             Writing writing) {
  if (!item.read) return;
  auto content = source.read(*item.entry);
  if (!content) {
    // Remembered as skipped, so the next run (and every refresh before `ask`) does not warn
    // about the same file again; it is still read again in case it was fixed.
    item.skip_reason = item.entry->kind == repo::EntryKind::symlink ? "symlink" : "unreadable";
    item.read_error = content.error().message;
    item.read_error_lasting = item.read_error == repo::k_symlink_to_directory;
    return;
  }
  if (item.known && !item.size_decision_changed && item.known->blob_id == item.entry->blob_id &&
      item.known->skip_reason.empty()) {
    item.unchanged = true;  // touched but not changed
    return;
  }
  item.content_size = content->size();
  item.skip_reason = skip_reason_for_content(item.entry->path, *content);
  if (item.skip_reason.empty())
    item.chunks = chunker.chunk(item.entry->path, item.language, *content);
  if (embedder != nullptr && embedder->locality() == embed::Locality::local) {
    embed_chunks(item, *embedder);
  }
  if (writing == Writing::yes && !item.chunks.empty()) item.texts = store::pack_texts(item.chunks);
}

}  // namespace

bool process_in_parallel(std::vector<Work>& work, repo::Source& source,
                         std::vector<std::unique_ptr<parse::Chunker>>& chunkers,
                         embed::Embedder* embedder, Writing writing,
                         const std::function<bool()>& cancelled) {
  std::vector<std::size_t> order(work.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto bytes = [&](std::size_t i) { return work[i].read ? work[i].entry->size : 0; };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return bytes(a) > bytes(b); });
  std::size_t large = 0;
  while (large < order.size() && bytes(order[large]) >= k_large_file_bytes) ++large;
  std::atomic<std::size_t> next{large};
  std::atomic<bool> stopped{false};
  const auto run = [&](unsigned thread) {
    const bool caller = thread == 0;
    parse::Chunker& chunker = *chunkers[thread];
    std::size_t own = 0;  // the calling thread's large files, before the shared ones
    for (;;) {
      const std::size_t n = caller && own < large ? own++ : next++;
      // `stopped` is also set by util::run_threads when a thread throws: the failure is
      // rethrown, not `stopped` returned.
      if (n >= order.size() || stopped) break;
      // Polled per file, so that a stop request is obeyed within a file, not a window of
      // them (a window of 256 files took over a second under sanitizers).
      if (cancelled && cancelled()) {
        stopped = true;
        break;
      }
      process(work[order[n]], source, chunker, embedder, writing);
    }
  };
  const std::size_t threads = std::min(chunkers.size(), std::max<std::size_t>(work.size(), 1));
  util::run_threads(static_cast<unsigned>(threads), run, &stopped);
  return !stopped;
}

std::string skip_reason_for_content(std::string_view path, std::string_view content) {
  // Never stored (an index is often shared as a CI artifact), never sent to a remote model.
  if (util::looks_like_secret(path, content)) return "secret";
  if (content.substr(0, k_binary_probe_bytes).find('\0') != std::string_view::npos) return "binary";
  if (is_generated_name(path)) return "generated";
  if (path.ends_with(".min.js") || path.ends_with(".min.css")) return "minified";
  std::size_t longest = 0;
  std::size_t lines = 0;
  for (std::size_t start = 0; start < content.size();) {
    auto end = content.find('\n', start);
    if (end == std::string_view::npos) end = content.size();
    longest = std::max(longest, end - start);
    ++lines;
    start = end + 1;
  }
  if (longest > k_max_line_length) return "minified";
  if (content.size() > 4096 && lines > 0 && content.size() / lines > k_max_average_line_length) {
    return "minified";
  }
  return "";
}

}  // namespace kasava::index
