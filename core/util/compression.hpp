// Compression of chunk text in the index (compression.cpp explains both formats): zstd for
// what kasava writes, and the LZ77 of our own that indexes of schema 4 and 5 hold, decoded
// only. Both decoders trust nothing they read — an index file may be damaged or hostile.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "core/util/result.hpp"

namespace kasava::util {

/// Compresses `data` into one zstd frame; any bytes.
std::string compress(std::string_view data);

/// The size a frame says it decodes to (its header), without decoding it; nullopt when even
/// that much is malformed.
std::optional<std::size_t> decompressed_size(std::string_view compressed);

/// Decodes a frame made by compress(), or only its first `wanted` bytes (the rest of the
/// frame is then not decoded). Anything malformed in what is read — truncated, damaged, made
/// up, bytes after the frame — or a frame that says it decodes to more than `max_size` bytes
/// is an error ("damaged compressed data: <what>"); no input makes it read or write out of
/// range.
Result<std::string> decompress(std::string_view compressed, std::size_t max_size,
                               std::size_t wanted = std::numeric_limits<std::size_t>::max());

/// As decompressed_size(), for a stream of kasava's own LZ77 (schema 4 and 5 indexes).
std::optional<std::size_t> lz77_decompressed_size(std::string_view compressed);

/// As decompress(), for a stream of kasava's own LZ77 (schema 4 and 5 indexes).
Result<std::string> decompress_lz77(std::string_view compressed, std::size_t max_size,
                                    std::size_t wanted = std::numeric_limits<std::size_t>::max());

}  // namespace kasava::util
