// Reading git's index file ourselves (format: git's Documentation/gitformat-index.txt).
//
// Why not git_index from libgit2: it verifies the file's SHA-1 with the collision-detecting
// implementation and builds a hash map of every path, which for a 10,000-file repository is
// ~57M instructions — a fifth of a no-change `kasava index`. This reader is one pass over the
// bytes. It declines (returns nullopt) whatever it does not fully understand, so the caller
// falls back to libgit2 rather than guess.
//
// The split index (`link` extension) is read here because libgit2 (1.5) refuses it ("unsupported
// mandatory extension"), and large trees are where git users turn it on: `.git/index` then
// holds only what changed since `sharedindex.<id>` was written, and the two are merged as git's
// split-index.c does (replacements, deletions by EWAH bitmap, then additions).
#include "core/repo/git_index_file.hpp"
#include "core/repo/prefault.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kasava::repo::detail {

namespace {

constexpr std::size_t k_header_bytes = 12;
constexpr std::size_t k_checksum_bytes = 20;
constexpr std::size_t k_stat_bytes = 40;  // ctime, mtime, dev, ino, mode, uid, gid, size
constexpr std::size_t k_id_bytes = 20;
constexpr std::uint16_t k_flag_extended = 0x4000;
constexpr std::uint16_t k_flag_stage_mask = 0x3000;
constexpr std::uint16_t k_extended_skip_worktree = 0x4000;
constexpr std::uint16_t k_extended_intent_to_add = 0x2000;
constexpr std::uint32_t k_mode_type_mask = 0170000;
constexpr std::uint32_t k_mode_directory = 0040000;  // only in a sparse index

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

std::uint16_t be16(const unsigned char* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

/// git's varint of index v4 (varint.c): 7 bits a byte, most significant first, +1 per
/// continuation. False on overflow or when it runs past `end`.
bool decode_varint(const unsigned char*& p, const unsigned char* end, std::uint64_t& value) {
  if (p >= end) return false;
  unsigned char c = *p++;
  value = c & 127u;
  while (c & 128u) {
    value += 1;
    if (value == 0 || (value >> 57) != 0 || p >= end) return false;
    c = *p++;
    value = (value << 7) + (c & 127u);
  }
  return true;
}

constexpr std::size_t k_path_block_bytes = 64 * 1024;

std::uint64_t be64(const unsigned char* p) {
  return (std::uint64_t{be32(p)} << 32) | be32(p + 4);
}

/// The bytes an EWAH bitmap takes at the start of `data` (ewah_io.c: a 32-bit size in bits, a
/// 32-bit count of 64-bit words, the words, a 32-bit position of the last run-length word);
/// 0 when it does not fit.
std::size_t ewah_size(const char* data, std::size_t bytes) {
  if (bytes < 12) return 0;
  const std::uint64_t words = be32(reinterpret_cast<const unsigned char*>(data) + 4);
  const std::uint64_t total = 12 + 8 * words;
  return total <= bytes ? static_cast<std::size_t>(total) : 0;
}

/// The set bits of an EWAH bitmap, ascending, as git's ewah_each_bit() finds them: each
/// run-length word says how many 64-bit words of its bit (bit 0) follow (bits 1–32), then
/// how many literal words (bits 33–63). False when a bit is at `limit` or beyond.
bool ewah_positions(std::string_view bitmap, std::size_t limit, std::vector<std::uint32_t>& out) {
  if (bitmap.empty()) return true;
  const auto* words = reinterpret_cast<const unsigned char*>(bitmap.data()) + 8;
  const std::size_t count = (bitmap.size() - 12) / 8;
  std::uint64_t position = 0;
  for (std::size_t at = 0; at < count;) {
    const std::uint64_t marker = be64(words + 8 * at++);
    const std::uint64_t run = ((marker >> 1) & 0xffffffffu) * 64;
    if (marker & 1u) {
      if (position + run > limit) return false;
      for (std::uint64_t k = 0; k < run; ++k) out.push_back(static_cast<std::uint32_t>(position + k));
    }
    position += run;
    const std::uint64_t literals = marker >> 33;
    for (std::uint64_t k = 0; k < literals; ++k, position += 64) {
      if (at >= count) return false;
      std::uint64_t word = be64(words + 8 * at++);
      while (word != 0) {
        const std::uint64_t bit = position + static_cast<std::uint64_t>(__builtin_ctzll(word));
        if (bit >= limit) return false;
        out.push_back(static_cast<std::uint32_t>(bit));
        word &= word - 1;
      }
    }
  }
  return true;
}

/// One index file mapped and parsed, with its modification time; `absent` is what an absent
/// file gives.
std::optional<GitIndexFile> read_one(const std::string& path, std::optional<GitIndexFile> absent) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absent;
    return std::nullopt;
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size == 0) {
    ::close(fd);
    return std::nullopt;
  }
  // Mapped, not read: a read() needs a buffer the size of the file (~1 MB for 10,000 entries)
  // that must first be zero-filled and page-faulted in, then copied into. MAP_POPULATE maps
  // the page cache's pages in one call, so parsing takes no page fault either. Git reads its
  // index the same way; it replaces the file by a rename, never in place, so the mapping does
  // not change under us.
  const auto size = static_cast<std::size_t>(info.st_size);
  void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED) return std::nullopt;
  auto parsed = parse_git_index(std::string_view(static_cast<const char*>(mapped), size));
  ::munmap(mapped, size);
  if (parsed) {
    constexpr std::int64_t k_ns = 1000000000;
    parsed->mtime_ns = static_cast<std::int64_t>(info.st_mtim.tv_sec) * k_ns + info.st_mtim.tv_nsec;
  }
  return parsed;
}

}  // namespace

void PathStore::adopt(PathStore&& other) {
  for (auto& block : other.m_blocks) m_blocks.push_back(std::move(block));
  other.m_blocks.clear();
  other.m_next = nullptr;
  other.m_free = 0;
}

void PathStore::reserve(std::size_t bytes) {
  if (bytes <= m_free) return;
  m_blocks.emplace_back(new char[bytes]);  // not zero-filled: every byte handed out is written
  prefault_for_writing(m_blocks.back().get(), bytes);
  m_next = m_blocks.back().get();
  m_free = bytes;
}

std::string_view PathStore::add(std::string_view text) {
  if (text.size() > m_free) reserve(std::max(k_path_block_bytes, text.size()));
  char* const copy = m_next;
  if (!text.empty()) std::memcpy(copy, text.data(), text.size());
  m_next += text.size();
  m_free -= text.size();
  return {copy, text.size()};
}

std::optional<GitIndexFile> parse_git_index(std::string_view bytes) {
  const auto* begin = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < k_header_bytes + k_checksum_bytes || std::memcmp(begin, "DIRC", 4) != 0)
    return std::nullopt;
  const std::uint32_t version = be32(begin + 4);
  if (version < 2 || version > 4) return std::nullopt;
  const std::uint32_t count = be32(begin + 8);
  const unsigned char* const end = begin + bytes.size() - k_checksum_bytes;
  // Each entry takes at least 62 bytes (v4: 63 with its varint and NUL): a count no file of this
  // size can hold is damage, not a reason to reserve gigabytes.
  if (count > bytes.size() / 62) return std::nullopt;

  GitIndexFile file;
  file.entries.reserve(count);
  prefault_for_writing(file.entries.data(), count * sizeof(GitIndexEntry));
  // Versions 2 and 3 store each path whole after 62 bytes of fixed fields: one block holds them.
  const std::size_t fixed_bytes = k_header_bytes + k_checksum_bytes + std::size_t{count} * 62;
  if (version < 4 && fixed_bytes < bytes.size()) file.paths.reserve(bytes.size() - fixed_bytes);
  const unsigned char* p = begin + k_header_bytes;
  std::string previous;  // v4 paths are stored as "drop N bytes of the previous path, add this"
  std::size_t unnamed = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    const unsigned char* const start = p;
    if (static_cast<std::size_t>(end - p) < k_stat_bytes + k_id_bytes + 2) return std::nullopt;
    GitIndexEntry entry;
    entry.ctime_s = be32(p);
    entry.ctime_ns = be32(p + 4);
    entry.mtime_s = be32(p + 8);
    entry.mtime_ns = be32(p + 12);
    entry.dev = be32(p + 16);
    entry.ino = be32(p + 20);
    entry.mode = be32(p + 24);
    entry.uid = be32(p + 28);
    entry.gid = be32(p + 32);
    entry.size = be32(p + 36);
    std::memcpy(entry.id, p + k_stat_bytes, k_id_bytes);
    p += k_stat_bytes + k_id_bytes;
    const std::uint16_t flags = be16(p);
    p += 2;
    entry.stage = static_cast<std::uint8_t>((flags & k_flag_stage_mask) >> 12);
    if (flags & k_flag_extended) {
      if (version < 3 || end - p < 2) return std::nullopt;
      const std::uint16_t extended = be16(p);
      p += 2;
      entry.skip_worktree = (extended & k_extended_skip_worktree) != 0;
      entry.intent_to_add = (extended & k_extended_intent_to_add) != 0;
    }
    if ((entry.mode & k_mode_type_mask) == k_mode_directory) return std::nullopt;

    if (version == 4) {
      std::uint64_t drop = 0;
      if (!decode_varint(p, end, drop) || drop > previous.size()) return std::nullopt;
      const void* nul = std::memchr(p, '\0', static_cast<std::size_t>(end - p));
      if (nul == nullptr) return std::nullopt;
      const auto* suffix_end = static_cast<const unsigned char*>(nul);
      previous.resize(previous.size() - drop);
      previous.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(suffix_end - p));
      entry.path = file.paths.add(previous);
      p = suffix_end + 1;
    } else {
      const void* nul = std::memchr(p, '\0', static_cast<std::size_t>(end - p));
      if (nul == nullptr) return std::nullopt;
      const auto* name_end = static_cast<const unsigned char*>(nul);
      entry.path = file.paths.add(std::string_view(reinterpret_cast<const char*>(p),
                                                   static_cast<std::size_t>(name_end - p)));
      // The entry is NUL-padded to a multiple of 8 bytes, with at least one NUL.
      const std::size_t length = static_cast<std::size_t>(name_end - start);
      const std::size_t padded = (length + 8) & ~std::size_t{7};
      if (padded > static_cast<std::size_t>(end - start)) return std::nullopt;
      p = start + padded;
    }
    // An empty path is a split index's replacement (checked against its link when applied).
    if (entry.path.empty()) ++unnamed;
    file.entries.push_back(std::move(entry));
  }

  // Extensions: a 4-byte signature and a 4-byte size each. Optional ones (uppercase first
  // letter: TREE, REUC, UNTR, FSMN, EOIE, IEOT) do not change the entries; a required one does,
  // and of those only the split index's `link` is understood.
  while (end - p >= 8) {
    const std::uint32_t size = be32(p + 4);
    if (size > static_cast<std::size_t>(end - p) - 8) return std::nullopt;
    if (std::memcmp(p, "link", 4) == 0) {
      if (file.link || size < k_id_bytes) return std::nullopt;
      SplitIndexLink& link = file.link.emplace();
      std::memcpy(link.base, p + 8, k_id_bytes);
      const char* const bitmaps = reinterpret_cast<const char*>(p + 8 + k_id_bytes);
      const std::size_t bitmap_bytes = size - k_id_bytes;
      if (bitmap_bytes > 0) {
        const std::size_t first = ewah_size(bitmaps, bitmap_bytes);
        if (first == 0) return std::nullopt;
        const std::size_t second = ewah_size(bitmaps + first, bitmap_bytes - first);
        if (second == 0 || first + second != bitmap_bytes) return std::nullopt;
        link.deleted.assign(bitmaps, first);
        link.replaced.assign(bitmaps + first, second);
      }
    } else if (p[0] < 'A' || p[0] > 'Z') {
      return std::nullopt;
    }
    p += 8 + size;
  }
  if (p != end) return std::nullopt;
  if (unnamed > 0 && !file.link) return std::nullopt;
  std::memcpy(file.checksum, end, k_checksum_bytes);
  return file;
}

std::optional<GitIndexFile> apply_split_index(GitIndexFile split, GitIndexFile shared) {
  if (!split.link || shared.link) return std::nullopt;
  if (std::memcmp(split.link->base, shared.checksum, k_id_bytes) != 0) return std::nullopt;
  const std::size_t count = shared.entries.size();
  std::vector<std::uint32_t> deleted, replaced;
  if (!ewah_positions(split.link->deleted, count, deleted) ||
      !ewah_positions(split.link->replaced, count, replaced)) {
    return std::nullopt;
  }
  // The first entries, without a path, replace the shared entries the bitmap names, in order.
  if (replaced.size() > split.entries.size()) return std::nullopt;
  for (std::size_t i = 0; i < split.entries.size(); ++i) {
    if (split.entries[i].path.empty() != (i < replaced.size())) return std::nullopt;
  }
  std::vector<std::uint8_t> action(count, 0);  // 1: deleted, 2: replaced
  for (const std::uint32_t position : deleted) action[position] = 1;
  for (std::size_t i = 0; i < replaced.size(); ++i) {
    if (action[replaced[i]] != 0) return std::nullopt;  // both deleted and replaced
    action[replaced[i]] = 2;
    split.entries[i].path = shared.entries[replaced[i]].path;
    shared.entries[replaced[i]] = split.entries[i];
  }
  std::vector<GitIndexEntry> kept;
  kept.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (action[i] != 1) kept.push_back(shared.entries[i]);
  }
  // The other entries are added as git's add_index_entry adds them: one of the same path and
  // stage is replaced, and a merged one (stage 0) replaces every stage of its path.
  const auto before = [](const GitIndexEntry& a, const GitIndexEntry& b) {
    return a.path != b.path ? a.path < b.path : a.stage < b.stage;
  };
  std::vector<GitIndexEntry> added(split.entries.begin() + static_cast<std::ptrdiff_t>(replaced.size()),
                                   split.entries.end());
  std::stable_sort(added.begin(), added.end(), before);
  GitIndexFile merged;
  merged.entries.reserve(kept.size() + added.size());
  prefault_for_writing(merged.entries.data(), merged.entries.capacity() * sizeof(GitIndexEntry));
  std::size_t i = 0, j = 0;
  while (i < kept.size() || j < added.size()) {
    if (j == added.size()) {
      merged.entries.push_back(kept[i++]);
    } else if (i == kept.size()) {
      merged.entries.push_back(added[j++]);
    } else if (kept[i].path == added[j].path &&
               (added[j].stage == 0 || kept[i].stage == added[j].stage)) {
      ++i;
    } else if (before(kept[i], added[j])) {
      merged.entries.push_back(kept[i++]);
    } else {
      merged.entries.push_back(added[j++]);
    }
  }
  merged.mtime_ns = split.mtime_ns;
  merged.split = true;
  std::memcpy(merged.checksum, split.checksum, k_checksum_bytes);
  merged.paths = std::move(shared.paths);
  merged.paths.adopt(std::move(split.paths));
  return merged;
}

std::optional<GitIndexFile> read_git_index(const std::string& path) {
  std::optional<GitIndexFile> index = read_one(path, GitIndexFile{});
  if (!index || !index->link) return index;
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string shared_path = path.substr(0, path.rfind('/') + 1) + "sharedindex.";
  bool null_base = true;
  for (const std::uint8_t byte : index->link->base) {
    shared_path += k_digits[byte >> 4];
    shared_path += k_digits[byte & 15];
    null_base = null_base && byte == 0;
  }
  if (null_base) {  // a link to no shared index: git reads the entries as they are
    if (std::any_of(index->entries.begin(), index->entries.end(),
                    [](const GitIndexEntry& entry) { return entry.path.empty(); })) {
      return std::nullopt;
    }
    index->link.reset();
    return index;
  }
  // The shared index's own time is older than the split index's, which is kept: entries
  // modified after it are hashed to be sure (git smudged the shared index's racy ones).
  std::optional<GitIndexFile> shared = read_one(shared_path, std::nullopt);
  if (!shared) return std::nullopt;
  return apply_split_index(std::move(*index), std::move(*shared));
}

}  // namespace kasava::repo::detail
