// Progress and summary of an index run: see progress.hpp.
#include "commands/progress.hpp"

#include <chrono>
#include <cstdio>

#include "commands/interrupt.hpp"

namespace kasava::commands {

index::IndexCallbacks progress_callbacks(Context& context) {
  index::IndexCallbacks callbacks;
  const auto started = std::chrono::steady_clock::now();
  auto last_draw = started - std::chrono::seconds(1);
  callbacks.progress = [&context, started, last_draw](const index::IndexProgress& p) mutable {
    if (!context.output.shows_progress()) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_draw < std::chrono::milliseconds(100) && p.files_done < p.files_total) return;
    last_draw = now;
    const double elapsed = std::chrono::duration<double>(now - started).count();
    const double rate = elapsed > 0 ? static_cast<double>(p.files_done) / elapsed : 0.0;
    char line[160];
    if (rate > 0 && p.files_done < p.files_total) {
      const double eta = static_cast<double>(p.files_total - p.files_done) / rate;
      std::snprintf(line, sizeof line, "indexing: %zu/%zu files, %zu chunks, %.0f files/s, ETA %.0fs",
                    p.files_done, p.files_total, p.chunks, rate, eta);
    } else {
      std::snprintf(line, sizeof line, "indexing: %zu/%zu files, %zu chunks", p.files_done,
                    p.files_total, p.chunks);
    }
    context.output.progress(line);
  };
  callbacks.warning = [&context](const std::string& message) { context.output.warning(message); };
  callbacks.cancelled = [] { return interrupted(); };
  return callbacks;
}

std::string format_summary(const index::IndexSummary& summary) {
  char line[256];
  std::snprintf(line, sizeof line, "%zu files indexed (%zu parsed, %zu unchanged, %zu removed), "
                "%zu chunks, %zu skipped, %.2fs",
                summary.indexed, summary.parsed, summary.unchanged, summary.removed, summary.chunks,
                summary.skipped_total(), summary.seconds);
  std::string text = line;
  if (!summary.skipped.empty()) {
    text += " (";
    bool first = true;
    for (const auto& [reason, count] : summary.skipped) {
      if (!first) text += ", ";
      first = false;
      text += std::to_string(count) + " " + reason;
    }
    text += ")";
  }
  return text;
}

} // namespace kasava::commands
