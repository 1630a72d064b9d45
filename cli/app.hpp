// The kasava command line: the CLI definition (CLI11), the command table, and the one
// top-level catch that turns errors into `kasava: error: …` and exit codes.
#pragma once

namespace kasava::cli {

/// Runs kasava with these arguments; returns the process exit code.
int run(int argc, char** argv);

} // namespace kasava::cli
