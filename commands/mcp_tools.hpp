// The MCP tools kasava offers — search, read_file_range, index_status — behind
// mcp::ToolHandler, for both transports: `kasava mcp` on stdio (commands/mcp.cpp) and
// `kasava serve`'s /mcp endpoint. What differs between them is where the index and its
// repository come from (ToolPlace): stdio finds them in the current folder for every call
// and refreshes the index before a search; serve reads the index it serves, never writing,
// limited to what the caller's token may see.
#pragma once

#include <memory>
#include <string>

#include "commands/context.hpp"
#include "commands/store_search.hpp"
#include "commands/target.hpp"
#include "core/mcp/server.hpp"
#include "core/store/store.hpp"

namespace kasava::commands {

/// What the server tells the model about its tools (initialize's instructions), for one
/// repository's index and for a shared store.
extern const char* const k_mcp_instructions;
extern const char* const k_mcp_store_instructions;

/// Where the tools find the index and the repository whose files they read. Throwing
/// util::Failure refuses the call with that message (e.g. a token that sees no repository).
class ToolPlace {
public:
  virtual ~ToolPlace() = default;
  /// The index a search reads, ready to search (stdio: refreshed first; created when missing).
  virtual QueryTarget search_target() = 0;
  /// The index as it is, and its repository (the index file may not exist yet).
  virtual QueryTarget located_target() = 0;
  /// Whether search_target() brings the index up to date (the search tool says so).
  virtual bool refreshes() const = 0;
  /// The index of a target opened read-only for one call (default: opened anew; a server
  /// lends a connection it keeps).
  virtual std::shared_ptr<store::Store> open_index(const QueryTarget& target);
};

/// The index of the current folder, found again for every call (setup.hpp's prepare), as
/// `kasava ask` finds it: what `kasava mcp` serves.
class PreparedPlace : public ToolPlace {
public:
  explicit PreparedPlace(Context& context) : m_context(context) {}
  QueryTarget search_target() override;
  QueryTarget located_target() override;
  bool refreshes() const override { return true; }

private:
  Context& m_context;
};

/// search, read_file_range and index_status over the index and files of a ToolPlace.
class KasavaTools : public mcp::ToolHandler {
public:
  KasavaTools(Context& context, ToolPlace& place) : m_context(context), m_place(place) {}

  std::vector<mcp::Tool> tools() const override;
  mcp::ToolOutcome call(const std::string& name, const util::JsonValue& arguments) override;

private:
  Context& m_context;
  ToolPlace& m_place;
};

/// search, read_file_range and index_status over the repositories of a shared PostgreSQL
/// store (`kasava mcp --store`, serve's /mcp): each call borrows a pooled connection (checked
/// first, so a restarted database is no error), searches every
/// repository's latest published ref unless its arguments name a repository or ref, and
/// reads files from the store; only the repositories `visible` lets through exist for it.
class StoreTools : public mcp::ToolHandler {
public:
  StoreTools(Context& context, StoreAccess& store, Visible visible = nullptr)
      : m_context(context), m_store(store), m_visible(std::move(visible)) {}

  std::vector<mcp::Tool> tools() const override;
  mcp::ToolOutcome call(const std::string& name, const util::JsonValue& arguments) override;

private:
  Context& m_context;
  StoreAccess& m_store;
  Visible m_visible;
};

}  // namespace kasava::commands
