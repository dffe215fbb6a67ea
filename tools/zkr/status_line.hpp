#pragma once
// The one-line progress display of a waiting zkr on a terminal: our position in the lock's queue and the time
// waited, redrawn about four times a second on stderr.

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>
#include <zkr/framework/curator_framework.hpp>

namespace zkr::cli {

/// What the status line looks at.
struct StatusSpec {
  /// What is being waited for, e.g. "lock /jobs/nightly".
  std::string description;
  /// The queue directories, in acquisition order (several for a multi-lock).
  std::vector<std::string> queue_dirs;
  /// A semaphore's leases directory ("" otherwise) and its lease count.
  std::string leases_dir;
  int max_leases = 0;
};

/// Runs on `ioc` (the thread of zkr's main loop). Our node in a queue directory is recognised as the child
/// whose ephemeral owner is our session; the directories are listed with a watch, so a quiet queue costs
/// nothing.
class StatusLine {
 public:
  StatusLine(boost::asio::io_context& ioc, CuratorFramework& client, StatusSpec spec);
  ~StatusLine();
  StatusLine(const StatusLine&) = delete;
  StatusLine& operator=(const StatusLine&) = delete;

  /// True when stderr is a terminal (the line is only ever shown there).
  static bool wanted();
  /// Starts drawing.
  void start();
  /// Stops and erases the line. Idempotent.
  void stop();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace zkr::cli
