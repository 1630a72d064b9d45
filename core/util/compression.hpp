// A small LZ77 compressor of our own, for chunk text in the index (compression.cpp explains
// the format): no dependency, byte-aligned, fast to decode, and a decoder that trusts nothing
// it reads — an index file may be damaged or hostile.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "core/util/result.hpp"

namespace kasava::util {

/// Compresses `data` into one stream; any bytes.
std::string compress(std::string_view data);

/// The size a stream says it decodes to (its first bytes), without decoding it; nullopt when
/// even that much is malformed.
std::optional<std::size_t> decompressed_size(std::string_view compressed);

/// Decodes a stream made by compress(), or only its first `wanted` bytes (the rest of the
/// stream is then not read). Anything malformed in what is read — truncated, damaged, made
/// up — or a stream that says it decodes to more than `max_size` bytes is an error ("damaged
/// compressed data: <what>"); no input makes it read or write out of range.
Result<std::string> decompress(std::string_view compressed, std::size_t max_size,
                               std::size_t wanted = std::numeric_limits<std::size_t>::max());

}  // namespace kasava::util
