// Batch planning (see batching.hpp).
#include "core/remote/batching.hpp"

#include <algorithm>

namespace kasava::remote {

std::size_t estimate_tokens(std::string_view text) {
  return (text.size() + 3) / 4;
}

std::vector<Batch> plan_batches(const std::vector<std::string_view>& inputs, std::size_t max_inputs,
                                std::size_t max_tokens) {
  max_inputs = std::max<std::size_t>(1, max_inputs);
  std::vector<Batch> batches;
  Batch current;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::size_t tokens = estimate_tokens(inputs[i]);
    const bool full = current.size() >= max_inputs ||
                      (current.size() > 0 && current.tokens + tokens > max_tokens);
    if (full) {
      batches.push_back(current);
      current = Batch{i, i, 0};
    }
    if (current.size() == 0) current.begin = i;
    current.end = i + 1;
    current.tokens += tokens;
  }
  if (current.size() > 0) batches.push_back(current);
  return batches;
}

}  // namespace kasava::remote
