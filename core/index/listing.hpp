// The listing step of an index run (internal to core/index): the source's files (for `--rev`,
// only the folders whose tree id changed), what the run will store of the folders once it
// completes (tree rows, submodules, the untracked cache), and the digest and counts that let
// a run whose listing did not change only report.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/repo/source.hpp"
#include "core/store/store.hpp"
#include "core/util/result.hpp"

namespace kasava::index {

// Folders a partial `--rev` listing did not walk (TreeListing::unchanged): every file under
// one is as the index has it.
class UnchangedFolders {
public:
  UnchangedFolders() = default;
  explicit UnchangedFolders(const std::vector<std::string>& folders)
      : m_folders(folders.begin(), folders.end()),
        m_root(std::find(folders.begin(), folders.end(), "") != folders.end()) {}

  bool empty() const { return m_folders.empty(); }
  /// True when the root is unchanged: the listing is empty and every file is as it was.
  bool everything() const { return m_root; }
  /// True when `path` (a file or folder) lies strictly below one of the folders.
  bool contain(std::string_view path) const {
    if (m_root) return !path.empty();
    for (auto slash = path.find('/'); slash != std::string_view::npos;
         slash = path.find('/', slash + 1)) {
      if (m_folders.count(std::string(path.substr(0, slash))) != 0) return true;
    }
    return false;
  }

private:
  std::unordered_set<std::string> m_folders;
  bool m_root = false;
};

/// What a run listed, and what it stores of the folders once it completes.
struct Listing {
  std::vector<repo::SourceEntry> entries;
  UnchangedFolders unchanged;  // not empty: a partial listing
  bool has_trees = false;      // listed with tree ids (`--rev`)
  // The tree rows and submodules of this commit, once this run completes.
  std::vector<std::pair<std::string, std::string>> new_trees;
  std::vector<std::string> new_submodules;
  std::size_t kept_submodules = 0;  // submodules under unchanged folders
  bool trees_changed = false;
  // What the listing learnt of the folders, kept even when no file changed (it describes
  // the work tree, not the index).
  std::string learnt_untracked;
  bool untracked_cache_changed = false;

  /// Writes the tree rows of a complete `--rev` run, within the caller's transaction.
  void store_trees(store::Store& store) const;
  /// Writes what the listing learnt of the folders, within the caller's transaction.
  void store_untracked_cache(store::Store& store) const;
};

/// Lists the files of `source`. With `use_tree_ids` (the size limit and model are the
/// stored ones), a listing with tree ids skips the folders whose id the last complete `--rev`
/// run stored; otherwise every file is listed, to be decided again.
util::Result<Listing> list_files(repo::Source& source, const store::Store& store,
                                 bool use_tree_ids);

// A 128-bit digest of the listing and the settings that decide what is indexed, each field
// length-prefixed, mixed 8 bytes at a time (a byte at a time took ~2.4 ms for 10,000 files,
// on the latency of every refresh). Two lanes with different odd multipliers, each folding
// its high bits back down. Not cryptographic: it tells a changed listing from the last one.
// Returned as hex; "" when the listing cannot be trusted to stand for its content (stat data
// too recent: see racy_before in run_index).
std::string listing_digest(const std::vector<repo::SourceEntry>& entries, const std::string& model,
                           const std::string& limit, const std::string& root,
                           const std::string& commit, std::int64_t racy_before);

// What a run reports about the whole index: files indexed, chunks, files skipped by reason.
struct IndexCounts {
  store::Store::Counts counts;
  std::map<std::string, std::size_t> skipped;
};

IndexCounts count_index(const store::Store& store);

// The counts of a complete run are stored with the listing digest they belong to (meta
// listing_counts: the digest, files, chunks and reason=count fields, tab-separated), so a
// no-change run reports them without counting every row (110,000 chunks: ~13M instructions
// and a few hundred page reads). They are trusted only beside the same digest.
std::string encode_listing_counts(const std::string& digest, const IndexCounts& index);
std::optional<IndexCounts> decode_listing_counts(std::string_view text, std::string_view digest);

}  // namespace kasava::index
