// Publishing a local index to the shared PostgreSQL store (`kasava index --store`): the
// snapshot of a (repository, ref), sending only the blobs the store lacks.
#pragma once

#include <cstdint>
#include <string>

#include "commands/output.hpp"
#include "core/repo/source.hpp"
#include "core/store/store.hpp"

namespace kasava::commands {

struct PublishRequest {
  std::string conninfo;    ///< libpq URI or key=value string
  std::string repository;  ///< "org/name"
  std::string ref;         ///< branch or revision
  std::string model;       ///< the index's model id
};

struct PublishSummary {
  std::string where;       ///< host:port of the store
  std::string repository;
  std::string ref;
  std::int64_t files = 0;          ///< files in the snapshot
  std::int64_t blobs = 0;          ///< distinct blobs in the snapshot
  std::int64_t blobs_sent = 0;     ///< blobs the store lacked and received
  std::int64_t chunks_sent = 0;    ///< their chunks
  std::int64_t chunks = 0;         ///< chunks the snapshot holds
  bool changed = false;            ///< the snapshot differed from the stored one
  std::int64_t codes_partitioned = 0;  ///< codes of the store put in partitions anew (0: none)
  double seconds = 0.0;
};

/// The store's name for the repository at `root`: `name` when given, else its origin
/// remote's owner/name, else the folder's name.
std::string repository_name(const std::string& name, const std::string& root);
/// The ref: `revision` when given, else the branch checked out, else "HEAD".
std::string ref_name(const std::string& revision, const std::string& root);

/// Publishes the index `local` (complete, of `source`) as request.repository at
/// request.ref: asks the store which of the snapshot's blobs it has (one query), reads each
/// missing blob from `source`, checks that its git hash is its id, sends it in batches, then
/// swaps the snapshot in one transaction, showing its progress on `output`. Throws
/// util::Failure with one line naming the store's host and port (never a password), or
/// starting "interrupted:" when Ctrl-C or SIGTERM stopped it before the swap.
PublishSummary publish(const PublishRequest& request, const store::Store& local, repo::Source& source,
                       Output& output);

} // namespace kasava::commands
