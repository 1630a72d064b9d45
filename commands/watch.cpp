// `kasava watch`: the opt-in watcher (core/repo/watch.hpp) in the foreground, so that the
// refresh before each `ask` costs what changed instead of an lstat of every file.
#include <cstdio>

#include "commands/commands.hpp"
#include "commands/interrupt.hpp"
#include "core/repo/watch.hpp"

namespace kasava::commands {

ExitStatus run_watch(Context& context, Prepared& prepared) {
  const QueryTarget& target = prepared.target;
  if (!target.root) throw util::Failure("watch: " + target.no_root_reason);
  repo::watch_tree(*target.root, target.index_path, interrupt_flag(), [&](std::size_t folders) {
    context.output.out("watching " + std::to_string(folders) + " folders of '" + *target.root +
                       "' for '" + target.index_path + "' (Ctrl-C stops)\n");
    (void)context.output.flush();
  });
  return interrupted_status();
}

}  // namespace kasava::commands
