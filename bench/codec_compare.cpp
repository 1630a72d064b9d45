// bench/codec_compare ROOT [THREADS]: the chunk-text codec on real packs. Chunks every file
// `kasava index` would chunk under ROOT, packs each file's chunk strings as the indexer does
// (store::pack_texts: ~64 KiB packs), and compresses and decodes those packs on one thread
// with kasava's codec (util::compress: zstd level 3 since schema 6, which this program chose
// against kasava's own LZ77, see bench/README.md) and with zstd at other levels (one reused
// context, no dictionary): compressed bytes, ratio, and MB/s of raw text both ways (best of 3
// runs).
// Prints a table, then the figures as one JSON line.
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "bench/indexable_files.hpp"
#include "core/store/text_packs.hpp"
#include "core/util/compression.hpp"

using namespace kasava;

namespace {

struct Codec {
  std::string name;
  std::function<std::string(const std::string&)> compress;
  std::function<void(const std::string&, std::size_t, std::string&)> decompress;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Codec zstd_codec(int level) {
  static ZSTD_CCtx* const cctx = ZSTD_createCCtx();
  static ZSTD_DCtx* const dctx = ZSTD_createDCtx();
  return {"zstd -" + std::to_string(level),
          [level](const std::string& raw) {
            std::string out(ZSTD_compressBound(raw.size()), '\0');
            const std::size_t size =
                ZSTD_compressCCtx(cctx, out.data(), out.size(), raw.data(), raw.size(), level);
            if (ZSTD_isError(size)) std::abort();
            out.resize(size);
            return out;
          },
          [](const std::string& packed, std::size_t raw_size, std::string& out) {
            out.resize(raw_size);
            const std::size_t size =
                ZSTD_decompressDCtx(dctx, out.data(), out.size(), packed.data(), packed.size());
            if (ZSTD_isError(size) || size != raw_size) std::abort();
          }};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: codec_compare ROOT [THREADS]\n");
    return 2;
  }
  const unsigned threads = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 2;
  const std::vector<bench::IndexableFile> files =
      bench::read_indexable_files("codec_compare", argv[1]);
  std::vector<std::string> raw;  // the decoded bytes of every pack
  std::mutex raw_mutex;
  bench::on_threads(files.size(), threads, [&](parse::Chunker& chunker, std::size_t i) {
    const auto chunks = chunker.chunk(files[i].path, files[i].language, files[i].content);
    const store::PackedTexts packed = store::pack_texts(chunks);
    std::vector<std::string> decoded;
    for (const std::string& pack : packed.packs) {
      auto bytes = util::decompress(pack, store::k_max_pack_bytes);
      if (!bytes) std::abort();
      decoded.push_back(std::move(*bytes));
    }
    const std::lock_guard lock(raw_mutex);
    for (std::string& pack : decoded) raw.push_back(std::move(pack));
  });
  std::sort(raw.begin(), raw.end());  // the same order whatever the threads did
  std::size_t raw_bytes = 0;
  for (const std::string& pack : raw) raw_bytes += pack.size();

  std::vector<Codec> codecs;
  codecs.push_back({"kasava", [](const std::string& text) { return util::compress(text); },
                    [](const std::string& packed, std::size_t, std::string& out) {
                      auto decoded = util::decompress(packed, store::k_max_pack_bytes);
                      if (!decoded) std::abort();
                      out = std::move(*decoded);
                    }});
  for (const int level : {1, 3, 6}) codecs.push_back(zstd_codec(level));

  std::printf("%zu packs, %.1f MB of chunk strings\n", raw.size(), raw_bytes / 1e6);
  std::printf("%-12s %12s %7s %12s %12s\n", "codec", "bytes", "ratio", "comp MB/s", "decomp MB/s");
  std::string json = "{\"packs\": " + std::to_string(raw.size()) +
                     ", \"raw_bytes\": " + std::to_string(raw_bytes) + ", \"codecs\": [";
  for (std::size_t c = 0; c < codecs.size(); ++c) {
    const Codec& codec = codecs[c];
    std::vector<std::string> packed(raw.size());
    double compress_s = 1e9;
    double decompress_s = 1e9;
    for (int run = 0; run < 3; ++run) {
      auto start = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < raw.size(); ++i) packed[i] = codec.compress(raw[i]);
      compress_s = std::min(compress_s, seconds_since(start));
      std::string out;
      start = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < raw.size(); ++i) codec.decompress(packed[i], raw[i].size(), out);
      decompress_s = std::min(decompress_s, seconds_since(start));
    }
    std::string out;
    std::size_t packed_bytes = 0;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      packed_bytes += packed[i].size();
      codec.decompress(packed[i], raw[i].size(), out);
      if (out != raw[i]) {
        std::fprintf(stderr, "codec_compare: %s does not round-trip\n", codec.name.c_str());
        return 1;
      }
    }
    const double ratio = static_cast<double>(raw_bytes) / static_cast<double>(packed_bytes);
    std::printf("%-12s %12zu %7.2f %12.1f %12.1f\n", codec.name.c_str(), packed_bytes, ratio,
                raw_bytes / 1e6 / compress_s, raw_bytes / 1e6 / decompress_s);
    char entry[256];
    std::snprintf(entry, sizeof entry,
                  "%s{\"codec\": \"%s\", \"bytes\": %zu, \"ratio\": %.3f, \"compress_mb_s\": %.1f, "
                  "\"decompress_mb_s\": %.1f}",
                  c ? ", " : "", codec.name.c_str(), packed_bytes, ratio,
                  raw_bytes / 1e6 / compress_s, raw_bytes / 1e6 / decompress_s);
    json += entry;
  }
  std::printf("%s]}\n", json.c_str());
  return 0;
}
