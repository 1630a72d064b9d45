// The untracked cache's text (see untracked_cache.hpp): a header line with the format and the
// tracked paths' digest, then one line per folder, `<mtime_ns> <ctime_ns> <inode> <path>`.
#include "core/repo/untracked_cache.hpp"

#include <algorithm>
#include <charconv>

#include "core/util/hash.hpp"

namespace kasava::repo::detail {

namespace {

constexpr std::string_view k_header = "kasava-untracked-cache 1 ";

/// Reads one space-terminated decimal from the front of `text`; false when there is none.
template <typename Number>
bool take_number(std::string_view& text, Number& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end == text.data() + text.size() || *end != ' ') return false;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()) + 1);
  return true;
}

}  // namespace

std::string UntrackedCache::encode() const {
  std::string text(k_header);
  text += std::to_string(tracked_digest);
  text += '\n';
  for (const FolderStamp& folder : folders) {
    if (folder.path.find('\n') != std::string::npos) continue;
    text += std::to_string(folder.stat.mtime_ns);
    text += ' ';
    text += std::to_string(folder.stat.ctime_ns);
    text += ' ';
    text += std::to_string(folder.stat.inode);
    text += ' ';
    text += folder.path;
    text += '\n';
  }
  return text;
}

UntrackedCache UntrackedCache::decode(std::string_view text) {
  UntrackedCache cache;
  if (text.substr(0, k_header.size()) != k_header) return {};
  text.remove_prefix(k_header.size());
  std::size_t end = text.find('\n');
  if (end == std::string_view::npos) return {};
  std::string_view digest = text.substr(0, end);
  const auto parsed = std::from_chars(digest.data(), digest.data() + digest.size(),
                                      cache.tracked_digest);
  if (parsed.ec != std::errc{} || parsed.ptr != digest.data() + digest.size()) return {};
  text.remove_prefix(end + 1);
  cache.folders.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')));
  while (!text.empty()) {
    end = text.find('\n');
    if (end == std::string_view::npos) return {};
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end + 1);
    FolderStamp folder;
    if (!take_number(line, folder.stat.mtime_ns) || !take_number(line, folder.stat.ctime_ns) ||
        !take_number(line, folder.stat.inode)) {
      return {};
    }
    folder.path = line;
    if (!cache.folders.empty() && !(cache.folders.back().path < folder.path)) return {};
    cache.folders.push_back(std::move(folder));
  }
  return cache;
}

const FileStat* UntrackedCache::find(std::string_view path) const {
  const auto at = std::lower_bound(
      folders.begin(), folders.end(), path,
      [](const FolderStamp& folder, std::string_view key) { return folder.path < key; });
  return at != folders.end() && at->path == path ? &at->stat : nullptr;
}

void TrackedPathsDigest::add(std::string_view path, bool gitlink) {
  // The length first, so that the zero padding of the last word is unambiguous.
  m_value = util::mix_word(m_value, path.size() * 2 + (gitlink ? 1 : 0));
  util::for_each_word(path,
                      [this](std::uint64_t word) { m_value = util::mix_word(m_value, word); });
}

}  // namespace kasava::repo::detail
