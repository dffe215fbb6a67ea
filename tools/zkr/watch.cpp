#include "watch.hpp"

#include <spdlog/logger.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <zkr/recipes/cache/path_children_cache.hpp>
#include <zkr/recipes/cache/tree_cache.hpp>

#include "child.hpp"
#include "text.hpp"

namespace zkr::cli {

namespace asio = boost::asio;

namespace {

/// What zkr prints, whichever cache it came from.
enum class EventKind { created, changed, deleted, suspended, reconnected, lost, initialized };

std::string_view event_name(EventKind k) {
  switch (k) {
    case EventKind::created:
      return "created";
    case EventKind::changed:
      return "changed";
    case EventKind::deleted:
      return "deleted";
    case EventKind::initialized:
      return "initialized";
    default:
      return "connection";
  }
}

/// The connection state of a connection event, as Curator names it.
std::string_view state_name(EventKind k) {
  return k == EventKind::suspended ? "SUSPENDED" : k == EventKind::reconnected ? "RECONNECTED" : "LOST";
}

bool is_node_event(EventKind k) {
  return k == EventKind::created || k == EventKind::changed || k == EventKind::deleted;
}

/// Both caches' event types list the same seven kinds in EventKind's order (checked below).
template <class Type>
constexpr EventKind kind_of(Type t) {
  return static_cast<EventKind>(static_cast<int>(t));
}
template <class Type>
constexpr bool same_order(Type added, Type updated, Type removed) {
  return kind_of(added) == EventKind::created && kind_of(updated) == EventKind::changed &&
         kind_of(removed) == EventKind::deleted &&
         kind_of(Type::connection_suspended) == EventKind::suspended &&
         kind_of(Type::connection_reconnected) == EventKind::reconnected &&
         kind_of(Type::connection_lost) == EventKind::lost &&
         kind_of(Type::initialized) == EventKind::initialized;
}
static_assert(same_order(TreeCacheEvent::Type::node_added, TreeCacheEvent::Type::node_updated,
                         TreeCacheEvent::Type::node_removed));
static_assert(same_order(PathChildrenCacheEvent::Type::child_added,
                         PathChildrenCacheEvent::Type::child_updated,
                         PathChildrenCacheEvent::Type::child_removed));

/// One line of text: `created /a/b version=0 data_length=5 [data=...]`, `initialized`,
/// `connection SUSPENDED`.
std::string text_line(EventKind k, const std::optional<ChildData>& node, bool with_data) {
  std::string line(event_name(k));
  if (!is_node_event(k)) {
    if (k != EventKind::initialized) line.append(" ").append(state_name(k));
  } else if (node) {
    line += " " + node->path + " version=" + std::to_string(node->stat.version) +
            " data_length=" + std::to_string(node->stat.data_length);
    if (with_data) line += " data=" + printable(node->data);
  }
  return line + "\n";
}

/// One JSON object on one line (docs/cli.md has the shape).
std::string json_line(EventKind k, const std::optional<ChildData>& node, bool with_data) {
  std::string line = "{\"event\":\"" + std::string(event_name(k)) + "\"";
  if (!is_node_event(k)) {
    if (k != EventKind::initialized) line += ",\"state\":\"" + std::string(state_name(k)) + "\"";
  } else if (node) {
    const Stat& s = node->stat;
    line += ",\"path\":\"" + json_escape(node->path) + "\",\"version\":" + std::to_string(s.version) +
            ",\"cversion\":" + std::to_string(s.cversion) +
            ",\"data_length\":" + std::to_string(s.data_length) +
            ",\"num_children\":" + std::to_string(s.num_children) + ",\"czxid\":" + std::to_string(s.czxid) +
            ",\"mzxid\":" + std::to_string(s.mzxid) + ",\"ctime\":" + std::to_string(s.ctime) +
            ",\"mtime\":" + std::to_string(s.mtime) + ",\"ephemeral_owner\":\"" +
            hex_session(s.ephemeral_owner) + "\"";
    if (with_data) line += ",\"data\":\"" + json_escape(node->data) + "\"";
  }
  return line + "}\n";
}

class WatchRunner {
 public:
  WatchRunner(asio::io_context& ioc, CuratorFramework& client, const CommonOptions& common,
              const WatchOptions& options, std::shared_ptr<spdlog::logger> logger)
      : ioc_(ioc),
        client_(client),
        common_(common),
        options_(options),
        logger_(std::move(logger)),
        signals_(ioc) {
    for (int sig : handled_signals)
      if (!ignored_at_start(sig)) signals_.add(sig);
  }

  ~WatchRunner() { *alive_ = false; }

  int run() {
    wait_signal();
    logger_->debug("connecting to {}", common_.connect);
    client_.async_block_until_connected(
        common_.connection_timeout,
        asio::bind_cancellation_slot(cancel_.slot(), [this, alive = alive_](error_code ec, bool connected) {
          if (*alive) on_connected(ec, connected);
        }));
    if (!run_until(ioc_, finished_)) return exit_status::error;
    return exit_status_;
  }

 private:
  void wait_signal() {
    signals_.async_wait([this, alive = alive_](error_code ec, int sig) {
      if (ec || !*alive) return;
      on_signal(sig);
      if (!finished_) wait_signal();
    });
  }

  void on_signal(int sig) {
    logger_->debug("{}: ending the watch", signal_name(sig));
    if (!started_ && pending_signal_ == 0) {
      // Still connecting: withdraw the wait, and end once it has completed.
      pending_signal_ = sig;
      cancel_.emit(asio::cancellation_type::terminal);
      return;
    }
    finish(exit_status::signal_base + (pending_signal_ ? pending_signal_ : sig));
  }

  void on_connected(error_code ec, bool connected) {
    if (pending_signal_ != 0) {
      finish(exit_status::signal_base + pending_signal_);
      return;
    }
    if (ec || !connected) {
      say_error("could not connect to ZooKeeper at " + common_.connect + " within " +
                format_duration(common_.connection_timeout));
      finish(exit_status::unavailable);
      return;
    }
    started_ = true;
    try {
      start_cache(ec);
    } catch (const Error& e) {
      ec = e.code();
    }
    if (ec) {
      say_error("cannot watch " + options_.path + ": " + ec.message());
      finish(status_for(ec));
    }
  }

  /// The cache for the scope, its listener on our loop, started. It waits for a missing path and never
  /// creates one.
  void start_cache(error_code& ec) {
    auto executor = ioc_.get_executor();
    if (options_.scope == WatchScope::children) {
      children_.emplace(client_, options_.path, options_.data);
      children_->add_listener(
          [this, alive = alive_](const PathChildrenCacheEvent& e) {
            if (*alive) on_event(kind_of(e.type), e.data);
          },
          executor);
      children_->start(PathChildrenCache::StartMode::post_initialized_event, ec);
      return;
    }
    auto builder = TreeCache::new_builder(client_, options_.path);
    builder.set_cache_data(options_.data);
    if (options_.scope == WatchScope::node) builder.set_max_depth(0);
    tree_.emplace(builder.build());
    tree_->add_listener(
        [this, alive = alive_](const TreeCacheEvent& e) {
          if (*alive) on_event(kind_of(e.type), e.data);
        },
        executor);
    tree_->start(ec);
  }

  void on_event(EventKind k, const std::optional<ChildData>& node) {
    if (finished_) return;
    if (k == EventKind::initialized) initialized_ = true;
    if (is_node_event(k) && options_.changes_only && !initialized_) return;
    const std::string line =
        options_.json ? json_line(k, node, options_.data) : text_line(k, node, options_.data);
    errno = 0;
    if (std::fwrite(line.data(), 1, line.size(), stdout) != line.size() || std::fflush(stdout) != 0) {
      if (errno == EPIPE) {
        // The reader went away (`zkr watch ... | head -n 3`): end as a program killed by SIGPIPE would.
        logger_->debug("stdout closed: ending the watch");
        finish(exit_status::signal_base + SIGPIPE);
      } else {
        say_error(std::string("cannot write to stdout: ") + std::strerror(errno));
        finish(exit_status::error);
      }
      return;
    }
    if (is_node_event(k) && options_.count != 0 && ++node_events_ >= options_.count) finish(exit_status::ok);
  }

  void finish(int status) {
    if (finished_) return;
    exit_status_ = status;
    finished_ = true;
  }

  asio::io_context& ioc_;
  CuratorFramework& client_;
  const CommonOptions& common_;
  const WatchOptions& options_;
  std::shared_ptr<spdlog::logger> logger_;
  asio::signal_set signals_;
  asio::cancellation_signal cancel_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::optional<TreeCache> tree_;
  std::optional<PathChildrenCache> children_;

  bool started_ = false;
  bool initialized_ = false;
  int pending_signal_ = 0;
  std::uint64_t node_events_ = 0;
  int exit_status_ = 0;
  bool finished_ = false;
};

}  // namespace

int watch(const CommonOptions& common, const WatchOptions& options) {
  if (auto why = path_error(options.path)) {
    say_error("invalid path " + options.path + ": " + *why);
    return exit_status::usage;
  }
  // Order matters: the io_context outlives the client, whose handlers and listeners are posted to it.
  asio::io_context ioc;
  auto logger = make_logger(common);
  std::unique_ptr<CuratorFramework> client;
  try {
    client = make_client(common, logger, ioc.get_executor());
  } catch (const Error& e) {
    return report_start_failure(common, e);
  }
  int status = 0;
  {
    WatchRunner watcher(ioc, *client, common, options, logger);
    status = watcher.run();
  }  // closes the cache: its watches are removed
  client->close();
  return status;
}

}  // namespace zkr::cli
