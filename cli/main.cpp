// The kasava binary's entry point: everything else lives in libraries the tests link.
#include "cli/app.hpp"

int main(int argc, char** argv) { return kasava::cli::run(argc, argv); }
