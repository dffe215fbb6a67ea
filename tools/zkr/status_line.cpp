#include "status_line.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdio>

#include "common.hpp"

namespace zkr::cli {

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

/// How many of the newest children are examined when looking for our own node (it was created a moment ago).
constexpr std::size_t max_probes = 16;

struct DirInfo {
  std::string path;
  std::string ours;  ///< our node's name, once found
  bool present = false;
  std::size_t index = 0;
  std::size_t count = 0;
  bool watching = false;
  bool dirty = true;
};

std::size_t terminal_width() {
  winsize ws{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10) return ws.ws_col;
  return 80;
}

/// Children sorted by their sequence suffix, the order of every Curator lock directory.
void sort_by_sequence(std::vector<std::string>& names) {
  std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return sequential_suffix(a) < sequential_suffix(b);
  });
}

}  // namespace

struct StatusLine::State : std::enable_shared_from_this<StatusLine::State> {
  State(asio::io_context& i, CuratorFramework& c, StatusSpec s)
      : ioc(i), client(c), spec(std::move(s)), timer(i), started(std::chrono::steady_clock::now()) {
    for (auto& d : spec.queue_dirs) dirs.push_back(DirInfo{d});
    if (!spec.leases_dir.empty()) leases.path = spec.leases_dir;
  }

  asio::io_context& ioc;
  CuratorFramework& client;
  StatusSpec spec;
  asio::steady_timer timer;
  std::chrono::steady_clock::time_point started;
  std::vector<DirInfo> dirs;
  DirInfo leases;
  bool stopped = false;
  bool drawn = false;

  Watcher watcher_for(DirInfo& d) {
    d.watching = true;
    return [weak = weak_from_this(), path = d.path](const WatchedEvent&) {
      auto self = weak.lock();
      if (!self) return;
      for (auto* d : self->all()) {
        if (d->path == path) {
          d->watching = false;
          d->dirty = true;
        }
      }
    };
  }

  std::vector<DirInfo*> all() {
    std::vector<DirInfo*> v;
    for (auto& d : dirs) v.push_back(&d);
    if (!leases.path.empty()) v.push_back(&leases);
    return v;
  }

  asio::awaitable<void> refresh(DirInfo& d, bool find_ours) {
    error_code ec;
    Watcher w = d.watching ? Watcher{} : watcher_for(d);
    auto names = co_await client.async_get_children(d.path, std::move(w),
                                                    asio::redirect_error(asio::use_awaitable, ec));
    if (stopped) co_return;
    if (ec) {
      // The directory does not exist yet (or the connection is down): try again on the next tick.
      d.watching = false;
      d.present = false;
      d.count = 0;
      co_return;
    }
    d.dirty = false;
    sort_by_sequence(names);
    d.count = names.size();
    auto it = std::find(names.begin(), names.end(), d.ours);
    if (!d.ours.empty() && it != names.end()) {
      d.present = true;
      d.index = static_cast<std::size_t>(it - names.begin());
      co_return;
    }
    d.ours.clear();
    d.present = false;
    if (!find_ours) co_return;
    std::int64_t session = client.session_id();
    if (session == 0) co_return;
    std::size_t probes = 0;
    for (auto rit = names.rbegin(); rit != names.rend() && probes < max_probes; ++rit, ++probes) {
      error_code sec;
      auto stat = co_await client.async_exists(make_path(d.path, *rit), Watcher{},
                                               asio::redirect_error(asio::use_awaitable, sec));
      if (stopped) co_return;
      if (!sec && stat && stat->ephemeral_owner == session) {
        d.ours = *rit;
        d.present = true;
        d.index = static_cast<std::size_t>(names.rend() - rit) - 1;
        co_return;
      }
    }
    d.dirty = true;  // not created yet: look again next time
  }

  std::string text() const {
    auto waited =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    std::string s = "waiting for " + spec.description;
    // The queue we are in now: the last directory holding our node (a multi-lock goes through them in order).
    const DirInfo* current = nullptr;
    std::size_t which = 0;
    for (std::size_t i = 0; i < dirs.size(); ++i) {
      if (dirs[i].present) {
        current = &dirs[i];
        which = i;
      }
    }
    if (current) {
      if (dirs.size() > 1)
        s += " [lock " + std::to_string(which + 1) + " of " + std::to_string(dirs.size()) + ": " +
             current->path + "]";
      // The first waiter of a semaphore has its own lease node already: it is not in use.
      const auto in_use =
          std::to_string(std::min<std::size_t>(leases.count, static_cast<std::size_t>(spec.max_leases)));
      if (!leases.path.empty() && current->index == 0) {
        s += ": next in line, " + in_use + "/" + std::to_string(spec.max_leases) + " leases in use";
      } else {
        s += ": position " + std::to_string(current->index + 1) + " of " + std::to_string(current->count) +
             " (" + std::to_string(current->index) + " ahead)";
        if (!leases.path.empty())
          s += ", " + in_use + "/" + std::to_string(spec.max_leases) + " leases in use";
      }
    }
    s += ", " + format_duration(waited);
    return s;
  }

  void draw() {
    std::string line = "zkr: " + text();
    std::size_t width = terminal_width() - 1;
    if (line.size() > width) line.resize(width);
    std::fprintf(stderr, "\r\x1b[K%s", line.c_str());
    std::fflush(stderr);
    drawn = true;
  }

  void erase() {
    if (!drawn) return;
    std::fprintf(stderr, "\r\x1b[K");
    std::fflush(stderr);
    drawn = false;
  }

  /// Keeps the queue positions current: lists a directory again when its watch fired or our node is not
  /// known yet. Separate from the drawing, so a slow request (e.g. while connecting) never freezes the clock.
  asio::awaitable<void> refresh_loop() {
    auto self = shared_from_this();
    asio::steady_timer pause(ioc);
    while (!stopped) {
      for (auto& d : dirs) {
        if (stopped) break;
        if (d.dirty || d.ours.empty()) co_await refresh(d, true);
        // A multi-lock takes its locks in order: no node of ours further on before we are in this queue.
        if (d.ours.empty()) break;
      }
      if (!stopped && !leases.path.empty() && (leases.dirty || !leases.watching))
        co_await refresh(leases, false);
      if (stopped) break;
      pause.expires_after(250ms);
      error_code ec;
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
  }

  asio::awaitable<void> draw_loop() {
    auto self = shared_from_this();
    while (!stopped) {
      draw();
      timer.expires_after(250ms);
      error_code ec;
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
  }
};

StatusLine::StatusLine(asio::io_context& ioc, CuratorFramework& client, StatusSpec spec)
    : state_(std::make_shared<State>(ioc, client, std::move(spec))) {}

StatusLine::~StatusLine() { stop(); }

bool StatusLine::wanted() { return ::isatty(STDERR_FILENO) == 1; }

void StatusLine::start() {
  asio::co_spawn(state_->ioc, state_->draw_loop(), asio::detached);
  asio::co_spawn(state_->ioc, state_->refresh_loop(), asio::detached);
}

void StatusLine::stop() {
  if (state_->stopped) return;
  state_->stopped = true;
  state_->timer.cancel();
  state_->erase();
}

}  // namespace zkr::cli
