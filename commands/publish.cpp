// `kasava index --store`: the local index published to the shared store (see publish.hpp).
#include "commands/publish.hpp"

#include <chrono>
#include <filesystem>
#include <set>
#include <unordered_set>

#include "core/pgstore/store.hpp"
#include "core/util/strings.hpp"

namespace kasava::commands {

namespace {

// A batch of blobs sent in one transaction: large enough to amortise the round trips, small
// enough to keep a transaction's locks and memory modest.
constexpr std::size_t k_batch_blobs = 400;
constexpr std::size_t k_batch_bytes = 8u << 20;

} // namespace

std::string repository_name(const std::string& name, const std::string& root) {
  if (!name.empty()) return name;
  const repo::Identity identity = repo::identity_of(root);
  if (!identity.origin_url.empty()) {
    std::string from_origin = repo::owner_and_name(identity.origin_url);
    if (!from_origin.empty()) return from_origin;
  }
  return std::filesystem::path(root).filename().string();
}

std::string ref_name(const std::string& revision, const std::string& root) {
  if (!revision.empty()) return revision;
  const std::string branch = repo::identity_of(root).branch;
  return branch.empty() ? "HEAD" : branch;
}

PublishSummary publish(const PublishRequest& request, const store::Store& local, repo::Source& source) {
  const auto started = std::chrono::steady_clock::now();
  auto opened = pgstore::Store::open(request.conninfo);
  if (!opened) throw util::Failure(opened.error());
  pgstore::Store& shared = **opened;
  PublishSummary summary;
  summary.where = shared.where();
  summary.repository = request.repository;
  summary.ref = request.ref;

  const std::vector<store::IndexedFile> files = local.indexed_files();
  pgstore::Snapshot snapshot{request.repository, request.ref, local.meta("commit").value_or(""),
                             request.model, {}, {}};
  std::vector<std::string> ids;
  std::unordered_set<std::string> seen;
  for (const store::IndexedFile& file : files) {
    snapshot.files.push_back(pgstore::SnapshotFile{file.path, file.blob_id, file.language});
    if (seen.insert(file.blob_id).second) ids.push_back(file.blob_id);
  }
  snapshot.history = local.history_texts();
  summary.files = static_cast<std::int64_t>(files.size());
  summary.blobs = static_cast<std::int64_t>(ids.size());

  shared.hold_publish_lock();  // until the swap: no collection between check and swap
  const std::vector<std::string> present_list = shared.present_blobs(ids, request.model);
  std::unordered_set<std::string> present(present_list.begin(), present_list.end());
  std::vector<pgstore::BlobUpload> batch;
  std::size_t batch_bytes = 0;
  const auto send = [&] {
    if (batch.empty()) return;
    for (const auto& blob : batch) summary.chunks_sent += static_cast<std::int64_t>(blob.chunks.size());
    summary.blobs_sent += static_cast<std::int64_t>(batch.size());
    shared.put_blobs(std::move(batch), request.model);
    batch.clear();
    batch_bytes = 0;
  };
  for (const store::IndexedFile& file : files) {
    if (present.count(file.blob_id) > 0) continue;
    present.insert(file.blob_id);  // one upload per blob, whatever paths share it
    repo::SourceEntry entry;
    entry.path = file.path;
    entry.blob_id = file.blob_id;
    auto text = source.read(entry);
    if (!text) {
      throw util::Failure("publishing " + util::quoted(file.path) + ": " + text.error().message);
    }
    // The store keys everything by this id, shared by every repository: it must be the hash
    // of the text sent, or one publisher could change what others find.
    if (repo::blob_id_of(*text) != file.blob_id) {
      throw util::Failure("publishing " + util::quoted(file.path) +
                          ": the file changed since it was indexed; run `kasava index --store` again");
    }
    auto content = local.file_export(file.path);
    if (!content) continue;
    pgstore::BlobUpload upload;
    upload.blob_id = file.blob_id;
    upload.language = file.language;
    upload.text = std::move(*text);
    for (std::size_t i = 0; i < content->chunks.size(); ++i) {
      pgstore::ChunkUpload chunk;
      chunk.chunk = std::move(content->chunks[i]);
      chunk.code.assign(content->codes[i].begin(), content->codes[i].end());
      chunk.values.assign(content->values[i].begin(), content->values[i].end());
      upload.chunks.push_back(std::move(chunk));
    }
    batch_bytes += upload.text.size();
    batch.push_back(std::move(upload));
    if (batch.size() >= k_batch_blobs || batch_bytes >= k_batch_bytes) send();
  }
  send();
  const pgstore::SwapResult swapped = shared.swap_snapshot(snapshot);
  summary.changed = swapped.changed;
  summary.chunks = swapped.chunks;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return summary;
}

} // namespace kasava::commands
