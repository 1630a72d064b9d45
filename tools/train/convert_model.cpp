// kasava-convert-model: rewrites a `.kmodel` file of an earlier format version in the current
// one (embed::upgrade_model) without retraining or requantising, so the model's vectors and
// id stay the same. Used to carry models/kasava-code.kmodel over a format change.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "core/embed/model.hpp"

namespace {

constexpr int k_exit_error = 2;

int run(const std::string& input, const std::string& output) {
  std::ifstream in(input, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "kasava-convert-model: reading '%s': cannot open file\n", input.c_str());
    return k_exit_error;
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  const std::string old_bytes = bytes.str();
  const std::string origin = "converting '" + input + "'";
  auto converted = kasava::embed::upgrade_model(old_bytes, origin);
  if (!converted) {
    std::fprintf(stderr, "kasava-convert-model: %s\n", converted.error().message.c_str());
    return k_exit_error;
  }
  // Both must load and agree on the id before anything is written.
  const auto before = kasava::embed::Model::from_bytes(old_bytes, origin);
  const auto after = kasava::embed::Model::from_bytes(converted.value(), origin + " (converted)");
  if (!before || !after || before.value()->model_id() != after.value()->model_id()) {
    std::fprintf(stderr, "kasava-convert-model: %s: the converted model does not load the same\n",
                 input.c_str());
    return k_exit_error;
  }
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out.write(converted.value().data(), static_cast<std::streamsize>(converted.value().size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "kasava-convert-model: writing '%s' failed\n", output.c_str());
    return k_exit_error;
  }
  std::fprintf(stderr, "%s: %s, %zu → %zu bytes%s\n", output.c_str(),
               after.value()->model_id().c_str(), old_bytes.size(), converted.value().size(),
               old_bytes == converted.value() ? " (already current)" : "");
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  const bool help = argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h");
  if (argc != 3) {
    std::fprintf(stderr, "usage: kasava-convert-model IN.kmodel OUT.kmodel\n"
                         "  rewrites a model file in the current format (same rows, same id)\n");
    return help ? 0 : k_exit_error;
  }
  return run(argv[1], argv[2]);
}
