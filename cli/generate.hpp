// Man page and shell completions generated from the one CLI definition (`kasava generate`),
// so they never drift from --help.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace kasava::cli {

/// The document for format "man", "bash", "zsh" or "fish"; nullopt for an unknown format.
std::optional<std::string> generate_document(const CLI::App& app, std::string_view format);

} // namespace kasava::cli
