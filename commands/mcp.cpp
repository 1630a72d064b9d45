// `kasava mcp`: a Model Context Protocol server on stdio for coding agents and editors. The
// protocol is core/mcp (pure), the tools commands/mcp_tools.* (search refreshing the index
// first, read_file_range confined to the repository, index_status, all on the index of the
// current folder; or, with --store, the same over a shared store's repositories); this file
// is the loop: one JSON-RPC message per line on stdin, one reply
// per line on stdout, flushed at once. Nothing but protocol messages ever reaches stdout;
// warnings go to stderr.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "commands/commands.hpp"
#include "commands/interrupt.hpp"
#include "commands/mcp_tools.hpp"
#include "commands/store_search.hpp"
#include "core/mcp/server.hpp"

namespace kasava::commands {

namespace {

// Writes one message and its newline, flushed; false when stdout is gone.
bool send(const std::string& message) {
  const bool written = std::fwrite(message.data(), 1, message.size(), stdout) == message.size() &&
                       std::fputc('\n', stdout) != EOF;
  return written && std::fflush(stdout) == 0;
}

} // namespace

ExitStatus run_mcp(const McpCommandOptions& options, Context& context) {
  const std::string store = chosen_store(options.store);
  PreparedPlace place(context);
  KasavaTools local_tools(context, place);
  StoreAccess access(store, 2);  // one client, one call at a time, its Hamming scan on the second
  StoreTools store_tools(context, access);
  if (!store.empty()) {  // a store that cannot be read fails now, not at the first call
    auto reader = access.readers.acquire();
    if (!reader) throw util::Failure(reader.error());
  }
  mcp::Server server(store.empty() ? static_cast<mcp::ToolHandler&>(local_tools) : store_tools,
                     mcp::ServerInfo{"kasava", KASAVA_VERSION,
                                     store.empty() ? k_mcp_instructions : k_mcp_store_instructions});
  // read(2) rather than stdio: a signal interrupts it (EINTR) so SIGTERM ends the server
  // even while it waits for the client.
  std::string pending;
  char buffer[65536];
  for (;;) {
    std::size_t newline;
    while ((newline = pending.find('\n')) != std::string::npos) {
      const std::string line = pending.substr(0, newline);
      pending.erase(0, newline + 1);
      if (auto reply = server.handle(line)) {
        if (!send(*reply)) return ExitStatus::success;  // the client went away
      }
    }
    if (interrupted()) return interrupted_status();
    const ssize_t count = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) throw util::Failure(std::string("reading stdin: ") + std::strerror(errno));
    if (count == 0) break;
    pending.append(buffer, static_cast<std::size_t>(count));
  }
  if (auto reply = server.handle(pending)) send(*reply);  // a last message without newline
  return ExitStatus::success;
}

} // namespace kasava::commands
