// Grouping inputs into requests: at most N inputs and an estimated token budget per request,
// keeping input order so results map back by position.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace kasava::remote {

/// A rough token count for budgeting: bytes / 4, rounded up (code tokenizes at about 3–4
/// bytes per token; providers count exactly and truncate or reject what is too long).
std::size_t estimate_tokens(std::string_view text);

/// Inputs [begin, end) of one request.
struct Batch {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t tokens = 0;  ///< estimated
  std::size_t size() const { return end - begin; }
};

/// Consecutive batches covering every input in order, each with at most `max_inputs` inputs
/// and at most `max_tokens` estimated tokens — except that an input alone over the budget
/// gets a batch of its own (the provider decides what to do with it). Greedy: each batch is
/// filled until the next input would not fit, so only a batch's successor can be smaller.
std::vector<Batch> plan_batches(const std::vector<std::string_view>& inputs, std::size_t max_inputs,
                                std::size_t max_tokens);

}  // namespace kasava::remote
