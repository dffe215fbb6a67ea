#include "run_locked.hpp"

#include <signal.h>
#include <spdlog/logger.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <cstring>
#include <memory>
#include <zkr/recipes/revoker.hpp>

#include "child.hpp"

namespace zkr::cli {

namespace asio = boost::asio;

namespace {

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

class Runner {
 public:
  Runner(asio::io_context& ioc, CuratorFramework& client, const CommonOptions& common,
         const LockOptions& options, LockSpec spec, const std::vector<std::string>& command,
         std::shared_ptr<spdlog::logger> logger)
      : ioc_(ioc),
        client_(client),
        common_(common),
        options_(options),
        spec_(std::move(spec)),
        command_(command),
        logger_(std::move(logger)),
        signals_(ioc),
        sigchld_(ioc, SIGCHLD),
        kill_timer_(ioc),
        status_line_(ioc, client, spec_.status) {
    for (int sig : handled_signals)
      if (!ignored_at_start(sig)) signals_.add(sig);
  }

  ~Runner() { *alive_ = false; }

  int run() {
    wait_signal();
    if (!common_.quiet && !common_.verbose && StatusLine::wanted()) status_line_.start();
    // Connect first, within --connection-timeout; only then does the --timeout budget start (`-w 0` on a free
    // lock succeeds, and an unreachable ZooKeeper is 69 whatever -w says).
    connect(common_.connection_timeout);
    if (!run_until(ioc_, finished_)) return exit_status::error;
    return exit_status_;
  }

 private:
  enum class Phase { waiting, running, releasing };

  void wait_signal() {
    signals_.async_wait([this](error_code ec, int sig) {
      if (ec) return;
      on_signal(sig);
      if (!finished_) wait_signal();
    });
  }

  void on_signal(int sig) {
    switch (phase_) {
      case Phase::waiting:
        if (pending_signal_ == 0) {
          pending_signal_ = sig;
          status_line_.stop();
          logger_->debug("{} while waiting: cancelling the acquire", signal_name(sig));
          cancel_.emit(asio::cancellation_type::terminal);
        } else {
          // A second signal: stop waiting for the cancelled acquire to delete our node (a server that does
          // not answer can hold that up until the session times out); closing the session deletes it too.
          say(common_, signal_name(sig) + " again while cancelling: closing the session now");
          finish(exit_status::signal_base + pending_signal_);
        }
        break;
      case Phase::running:
        logger_->debug("forwarding {} to COMMAND (pid {}{})", signal_name(sig), child_,
                       own_group_ ? ", its process group" : "");
        signal_command(sig);
        break;
      case Phase::releasing:
        // A second signal while giving the lock back: stop waiting; closing the session deletes the node.
        logger_->debug("{} while releasing: closing now", signal_name(sig));
        finish(exit_status_ ? exit_status_ : exit_status::signal_base + sig);
        break;
    }
  }

  /// Waits (cancellable by a signal) for a connection, then starts the acquire.
  void connect(std::chrono::milliseconds limit) {
    logger_->debug("connecting to {}", common_.connect);
    client_.async_block_until_connected(
        limit, asio::bind_cancellation_slot(cancel_.slot(),
                                            [this, alive = alive_, limit](error_code ec, bool connected) {
                                              if (*alive) on_connected(ec, connected, limit);
                                            }));
  }

  void on_connected(error_code ec, bool connected, std::chrono::milliseconds limit) {
    if (pending_signal_ != 0) {
      status_line_.stop();
      say(common_, "interrupted by " + signal_name(pending_signal_) + " while connecting to ZooKeeper");
      finish(exit_status::signal_base + pending_signal_);
      return;
    }
    if (ec || !connected) {
      say_error("could not connect to ZooKeeper at " + common_.connect + " within " + format_duration(limit));
      finish(exit_status::unavailable);
      return;
    }
    logger_->debug(
        "acquiring {}{}", spec_.status.description,
        options_.timeout ? " (timeout " + format_duration(*options_.timeout) + ")" : std::string());
    spec_.start(options_.timeout, cancel_.slot(),
                [this, alive = alive_](error_code ec, std::vector<Lease> leases) {
                  if (*alive) on_acquired(ec, std::move(leases));
                });
  }

  void on_acquired(error_code ec, std::vector<Lease> leases) {
    status_line_.stop();
    if (pending_signal_ != 0) {
      say(common_, "interrupted by " + signal_name(pending_signal_) + " while waiting for " +
                       spec_.status.description);
      leases_ = std::move(leases);
      release_and_finish(exit_status::signal_base + pending_signal_);
      return;
    }
    if (ec) {
      leases_ = std::move(leases);
      if (options_.requeue && (is_retryable(ec) || is_session_lost(ec))) {
        say(common_, "could not acquire " + spec_.status.description + ": " + ec.message());
        release_then([this] { requeue(); });
        return;
      }
      say_error("could not acquire " + spec_.status.description + ": " + ec.message());
      release_and_finish(status_for(ec));
      return;
    }
    if (leases.empty()) {
      say(common_, "timed out after " + format_duration(*options_.timeout) + " waiting for " +
                       spec_.status.description);
      finish(exit_status::timed_out);
      return;
    }
    leases_ = std::move(leases);
    start_command();
  }

  void start_command() {
    std::vector<std::string> paths, tokens;
    for (auto& lease : leases_) {
      paths.push_back(lease.node_path());
      tokens.push_back(std::to_string(lease.fencing_token()));
      lease.on_status_change([this, alive = alive_](LeaseStatus s) {
        if (*alive) on_lease_status(s);
      });
      if (options_.revocable) watch_revocation(lease.node_path());
    }
    logger_->debug("acquired {}: {} (fencing token {})", spec_.status.description, join(paths, ","),
                   join(tokens, ","));
    for (auto& lease : leases_) {
      if (ends_hold(lease.status())) {
        say_error(spec_.held + " was lost before COMMAND could start: " + spec_.status.description);
        if (options_.requeue)
          release_then([this] { requeue(); });
        else
          release_and_finish(exit_status::lock_lost);
        return;
      }
    }
    std::vector<std::pair<std::string, std::string>> env{
        {"ZKR_LOCK_PATH", join(paths, ",")},
        {"ZKR_FENCING_TOKEN", join(tokens, ",")},
        {"ZKR_SESSION_ID", hex_session(leases_.front().session_id())},
    };
    phase_ = Phase::running;
    wait_child();
    // COMMAND leads a process group of its own, so that a lost lock, a revocation or a forwarded signal
    // reaches its children too. Not when stdin is a terminal: a process outside the terminal's foreground
    // group cannot read it (and would stop on SIGTTIN), so COMMAND then stays in zkr's group and only its pid
    // is signalled.
    own_group_ = ::isatty(STDIN_FILENO) == 0;
    child_ = spawn_command(command_, env, own_group_);
    if (child_ < 0) {
      int err = -child_;
      child_ = -1;
      say_error("cannot run " + command_.front() + ": " + std::strerror(err));
      release_and_finish(err == ENOENT ? exit_status::not_found : exit_status::cannot_execute);
      return;
    }
    group_ = own_group_ ? child_ : -1;
    logger_->debug("COMMAND started (pid {}{})", child_, own_group_ ? ", its own process group" : "");
  }

  void wait_child() {
    sigchld_.async_wait([this](error_code ec, int) {
      if (ec || finished_) return;
      if (child_ > 0) {
        int st = 0;
        pid_t r = ::waitpid(child_, &st, WNOHANG);
        if (r == child_) {
          child_ = -1;
          kill_timer_.cancel();
          int status = shell_status(st);
          logger_->debug("COMMAND exited with status {}", status);
          if (forced_status_ && group_ > 0 && ::kill(-group_, SIGKILL) == 0)
            // Terminated by us: nothing it started may outlive it and work on after the lock is given back.
            logger_->debug("killed what was left of COMMAND's process group {}", group_);
          if (forced_status_ == exit_status::lock_lost && options_.requeue)
            release_then([this] { requeue(); });
          else
            release_and_finish(forced_status_ ? forced_status_ : status);
          return;
        }
      }
      wait_child();
    });
  }

  /// Whether `s` ends the hold: lost, and with `stop_on_suspended` maybe lost too.
  bool ends_hold(LeaseStatus s) const {
    return s == LeaseStatus::lost || (options_.stop_on_suspended && s == LeaseStatus::maybe_lost);
  }

  void on_lease_status(LeaseStatus s) {
    if (phase_ != Phase::running || child_ < 0) return;
    switch (s) {
      case LeaseStatus::maybe_lost:
        if (options_.stop_on_suspended)
          lose("connection to ZooKeeper suspended: " + spec_.held + " may be lost");
        else
          say(common_, "connection to ZooKeeper suspended: " + spec_.held + " may be lost");
        break;
      case LeaseStatus::held:
        if (!forced_status_) say(common_, "reconnected: " + spec_.held + " is still held");
        break;
      case LeaseStatus::lost:
        if (options_.on_lost == OnLost::kill || options_.stop_on_suspended)
          lose(spec_.held + " was lost");
        else
          say_error(spec_.held + " was lost (--on-lost ignore): COMMAND keeps running");
        break;
      case LeaseStatus::released:
        break;
    }
  }

  /// The hold ended while COMMAND runs: terminate it (once), to exit 76 or requeue when it has gone.
  void lose(const std::string& why) {
    if (forced_status_) return;
    say_error(why + (options_.requeue ? ": terminating COMMAND, then waiting to lead again"
                                      : ": terminating COMMAND"));
    forced_status_ = exit_status::lock_lost;
    terminate_child();
  }

  /// Curator's revocation protocol on our own node: re-read on every data change; "__REVOKE__" (written by
  /// `Revoker::attempt_revoke`) is a request. Done here because the library's asynchronous acquires are never
  /// revocable (revocation there belongs to the blocking, thread-owned holds).
  void watch_revocation(const std::string& node) {
    client_.async_get_data(
        node,
        [this, alive = alive_, node](const WatchedEvent& ev) {
          if (*alive && ev.type == EventType::node_data_changed && phase_ == Phase::running)
            watch_revocation(node);
        },
        [this, alive = alive_](error_code ec, NodeData d) {
          if (!*alive || ec || d.data != zkr::revoke_message) return;
          if (phase_ == Phase::running && child_ > 0 && !forced_status_) {
            say_error("revocation requested: terminating COMMAND and releasing the lock");
            forced_status_ = exit_status::revoked;
            terminate_child();
          }
        });
  }

  void terminate_child() {
    if (child_ <= 0) return;
    signal_command(SIGTERM);
    kill_timer_.expires_after(options_.kill_after);
    kill_timer_.async_wait([this](error_code ec) {
      if (ec || child_ <= 0) return;
      say_error("COMMAND did not exit within " + format_duration(options_.kill_after) + ": sending SIGKILL");
      signal_command(SIGKILL);
    });
  }

  /// COMMAND's process group when it has one, else its pid.
  void signal_command(int sig) {
    if (child_ <= 0) return;
    if (group_ > 0 && ::kill(-group_, sig) == 0) return;
    ::kill(child_, sig);
  }

  void release_and_finish(int status) {
    exit_status_ = status;
    release_then([this, status] { finish(status); });
  }

  /// Gives every lease back, then runs `next`. With `stop_on_suspended` (`zkr lead`), a lease whose
  /// connection is suspended is not waited for: its delete cannot be confirmed before the server is back, so
  /// it is left to the guaranteed delete in the background (and to the end of the session).
  void release_then(std::function<void()> next) {
    phase_ = Phase::releasing;
    auto remaining = std::make_shared<std::size_t>(0);
    for (auto& lease : leases_) {
      if (lease.valid() && options_.stop_on_suspended && lease.status() == LeaseStatus::maybe_lost) {
        logger_->debug("connection suspended: deleting {} in the background", lease.node_path());
        lease = Lease();  // the destructor starts the guaranteed delete without waiting
      }
      if (lease.valid()) ++*remaining;
    }
    if (*remaining == 0) return next();
    auto then = std::make_shared<std::function<void()>>(std::move(next));
    for (auto& lease : leases_) {
      if (!lease.valid()) continue;
      std::string node = lease.node_path();
      lease.async_release([this, alive = alive_, remaining, then, node](error_code ec) {
        if (!*alive) return;
        if (ec && ec != client_errc::not_acquired)
          logger_->warn("release of {} failed: {}", node, ec.message());
        else
          logger_->debug("released {}", node);
        if (--*remaining == 0) (*then)();
      });
    }
  }

  /// `lead --requeue` after a loss: back to waiting, for as long as it takes ZooKeeper to come back (a signal
  /// ends the wait as it ends the first one).
  void requeue() {
    if (finished_) return;
    leases_.clear();
    phase_ = Phase::waiting;
    forced_status_ = 0;
    exit_status_ = 0;
    group_ = -1;
    own_group_ = false;
    say(common_, "waiting to lead again: " + spec_.status.description);
    connect(max_client_duration);
  }

  void finish(int status) {
    if (finished_) return;
    exit_status_ = status;
    finished_ = true;
    status_line_.stop();
  }

  asio::io_context& ioc_;
  CuratorFramework& client_;
  const CommonOptions& common_;
  const LockOptions& options_;
  LockSpec spec_;
  const std::vector<std::string>& command_;
  std::shared_ptr<spdlog::logger> logger_;
  asio::signal_set signals_;
  asio::signal_set sigchld_;
  asio::steady_timer kill_timer_;
  StatusLine status_line_;
  asio::cancellation_signal cancel_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);

  Phase phase_ = Phase::waiting;
  int pending_signal_ = 0;
  pid_t child_ = -1;
  pid_t group_ = -1;  ///< COMMAND's process group (its pid) when own_group_
  bool own_group_ = false;
  int forced_status_ = 0;
  int exit_status_ = 0;
  bool finished_ = false;
  std::vector<Lease> leases_;
};

}  // namespace

int run_locked(const CommonOptions& common, const LockOptions& options, const SpecFactory& make_spec,
               const std::vector<std::string>& command) {
  // Order matters: the io_context outlives the client, whose handlers and listeners are posted to it.
  asio::io_context ioc;
  auto logger = make_logger(common);
  std::unique_ptr<CuratorFramework> client;
  LockSpec spec;
  try {
    client = make_client(common, logger, ioc.get_executor());
    spec = make_spec(*client);
  } catch (const Error& e) {
    return report_start_failure(common, e);
  }
  if (options.revocable && !spec.revocable_kind) {
    say_error("--revocable applies to lock, read-lock, write-lock and multi-lock only");
    return exit_status::usage;
  }
  int status = 0;
  {
    Runner runner(ioc, *client, common, options, std::move(spec), command, logger);
    status = runner.run();
  }
  // Waits (at most max_close_wait) for a guaranteed delete still in flight, then ends the session: no node of
  // ours survives zkr.
  client->close();
  return status;
}

}  // namespace zkr::cli
