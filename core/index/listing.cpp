// Listing the files of an index run and recognising a listing the index already holds.
#include "core/index/listing.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdio>
#include <utility>

#include "core/util/hash.hpp"
#include "core/util/strings.hpp"

namespace kasava::index {
namespace {

// The two lanes of listing_digest, fed a field at a time.
class ListingDigest {
public:
  void add(std::string_view text) {
    add_number(text.size());
    util::for_each_word(text, [this](std::uint64_t word) { mix(word); });
  }
  void add_number(std::uint64_t value) { mix(value); }
  std::string hex() const {
    char text[40];
    std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(m_a),
                  static_cast<unsigned long long>(m_b));
    return text;
  }

private:
  void mix(std::uint64_t word) {
    m_a = util::mix_word(m_a, word);
    m_b = (m_b ^ std::rotl(word, 32)) * 0xC2B2AE3D27D4EB4FULL;
    m_b ^= m_b >> 31;
  }
  std::uint64_t m_a = util::k_fnv1a64_basis;
  std::uint64_t m_b = 0x84222325cbf29ce4ULL;
};

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < text.size();) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) {
    if (!text.empty()) text += '\n';
    text += line;
  }
  return text;
}

}  // namespace

void Listing::store_trees(store::Store& store) const {
  store.set_tree_ids(new_trees);
  store.set_meta("rev_submodules", join_lines(new_submodules));
}

void Listing::store_untracked_cache(store::Store& store) const {
  store.set_meta("untracked_cache", learnt_untracked);
}

util::Result<Listing> list_files(repo::Source& source, const store::Store& store,
                                 bool use_tree_ids) {
  Listing listing;
  // The listing: with tree ids (`--rev`), only the folders that changed since the last
  // complete `--rev` run. A new size limit or model re-decides every file: list them all.
  std::vector<std::string> unchanged_folders;
  std::vector<std::pair<std::string, std::string>> trees;
  std::vector<std::pair<std::string, std::string>> known_trees;
  if (use_tree_ids) known_trees = store.tree_ids();
  // Work trees: the folders found unchanged since the last listing are not read again.
  const std::string known_untracked = store.meta("untracked_cache").value_or("");
  source.use_untracked_cache(known_untracked);
  auto tree_listing = source.list_changed(known_trees);
  listing.has_trees = tree_listing.has_value();
  if (listing.has_trees) {
    if (!*tree_listing) return tree_listing->error();
    listing.entries = std::move((*tree_listing)->entries);
    unchanged_folders = std::move((*tree_listing)->unchanged);
    trees = std::move((*tree_listing)->trees);
  } else {
    auto listed = source.list();
    if (!listed) return listed.error();
    listing.entries = std::move(*listed);
  }
  // The entries live for the whole run; a vector grown by doubling holds up to twice their
  // size (kernel: 131,072 places for 78,528 files, 5 MB).
  listing.entries.shrink_to_fit();
  listing.unchanged = UnchangedFolders(unchanged_folders);
  listing.learnt_untracked = source.untracked_cache();
  listing.untracked_cache_changed = listing.learnt_untracked != known_untracked;
  // Submodules have no file row: the last `--rev` run remembers them for its summary.
  const std::vector<std::string> known_submodules =
      known_trees.empty() ? std::vector<std::string>{}
                          : split_lines(store.meta("rev_submodules").value_or(""));
  if (listing.has_trees) {
    listing.new_trees = trees;
    for (const auto& row : known_trees) {
      if (listing.unchanged.contain(row.first)) listing.new_trees.push_back(row);
    }
    std::sort(listing.new_trees.begin(), listing.new_trees.end());
    for (const std::string& path : known_submodules) {
      if (listing.unchanged.contain(path)) listing.new_submodules.push_back(path);
    }
    listing.kept_submodules = listing.new_submodules.size();
    for (const repo::SourceEntry& entry : listing.entries) {
      if (entry.kind == repo::EntryKind::submodule) listing.new_submodules.push_back(entry.path);
    }
    std::sort(listing.new_submodules.begin(), listing.new_submodules.end());
  }
  listing.trees_changed = listing.has_trees && (listing.new_trees != known_trees ||
                                                listing.new_submodules != known_submodules);
  return listing;
}

std::string listing_digest(const std::vector<repo::SourceEntry>& entries, const std::string& model,
                           const std::string& limit, const std::string& root,
                           const std::string& commit, std::int64_t racy_before) {
  ListingDigest digest;
  digest.add(model);
  digest.add(limit);
  digest.add(root);
  digest.add(commit);
  digest.add_number(entries.size());
  for (const repo::SourceEntry& entry : entries) {
    digest.add(entry.path);
    digest.add_number(static_cast<std::uint64_t>(entry.kind));
    digest.add_number(entry.size);
    if (!entry.blob_id.empty()) {
      digest.add(entry.blob_id);
    } else if (entry.kind == repo::EntryKind::regular) {
      if (entry.stat.mtime_ns == 0 || entry.stat.mtime_ns >= racy_before) return "";
      digest.add_number(static_cast<std::uint64_t>(entry.stat.mtime_ns));
      digest.add_number(static_cast<std::uint64_t>(entry.stat.ctime_ns));
      digest.add_number(entry.stat.inode);
    }
  }
  return digest.hex();
}

IndexCounts count_index(const store::Store& store) {
  return IndexCounts{store.counts(), store.skipped_files()};
}

std::string encode_listing_counts(const std::string& digest, const IndexCounts& index) {
  std::string text = digest + '\t' + std::to_string(index.counts.files) + '\t' +
                     std::to_string(index.counts.chunks);
  for (const auto& [reason, count] : index.skipped) {
    text += '\t' + reason + '=' + std::to_string(count);
  }
  return text;
}

std::optional<IndexCounts> decode_listing_counts(std::string_view text, std::string_view digest) {
  const auto fields = util::split(text, '\t');
  if (digest.empty() || fields.size() < 3 || fields[0] != digest) return std::nullopt;
  const auto number = [](std::string_view field) -> std::optional<std::int64_t> {
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (error != std::errc() || end != field.data() + field.size() || value < 0)
      return std::nullopt;
    return value;
  };
  IndexCounts index;
  const auto files = number(fields[1]);
  const auto chunks = number(fields[2]);
  if (!files || !chunks) return std::nullopt;
  index.counts = {*files, *chunks};
  for (std::size_t i = 3; i < fields.size(); ++i) {
    const auto equals = fields[i].rfind('=');
    if (equals == std::string_view::npos) return std::nullopt;
    const auto count = number(fields[i].substr(equals + 1));
    if (!count) return std::nullopt;
    index.skipped[std::string(fields[i].substr(0, equals))] = static_cast<std::size_t>(*count);
  }
  return index;
}

}  // namespace kasava::index
