// C-client helpers that need no running client: create modes, log routing, session expiry injection.

#include "zk_glue.hpp"

#include <poll.h>

#include <cstring>
#include <mutex>
#include <string_view>

namespace zkr::detail {

int to_c_mode(CreateMode m) noexcept {
  switch (m) {
    case CreateMode::persistent: return ZOO_PERSISTENT;
    case CreateMode::ephemeral: return ZOO_EPHEMERAL;
    case CreateMode::persistent_sequential: return ZOO_PERSISTENT_SEQUENTIAL;
    case CreateMode::ephemeral_sequential: return ZOO_EPHEMERAL_SEQUENTIAL;
    case CreateMode::container: return ZOO_CONTAINER;
    case CreateMode::persistent_with_ttl: return ZOO_PERSISTENT_WITH_TTL;
    case CreateMode::persistent_sequential_with_ttl: return ZOO_PERSISTENT_SEQUENTIAL_WITH_TTL;
  }
  return ZOO_PERSISTENT;
}

namespace {
thread_local spdlog::logger* t_log_target = nullptr;
}

void set_thread_log_target(spdlog::logger* logger) noexcept { t_log_target = logger; }

std::mutex& c_client_mutex() noexcept {
  static std::mutex m;
  return m;
}

void route_c_log(const char* message) {
  spdlog::logger* log = t_log_target;
  if (!log || !message) return;
  std::string_view m(message);
  while (!m.empty() && (m.back() == '\n' || m.back() == '\r')) m.remove_suffix(1);
  auto level = spdlog::level::info;
  if (m.find(":ERROR@") != std::string_view::npos)
    level = spdlog::level::err;
  else if (m.find(":WARN@") != std::string_view::npos)
    level = spdlog::level::warn;
  else if (m.find(":DEBUG@") != std::string_view::npos)
    level = spdlog::level::debug;
  if (log->should_log(level)) log->log(level, "zookeeper-c: {}", m);
}

namespace {
void noop_watcher(zhandle_t*, int, int, const char*, void*) {}
}  // namespace

int expire_session(const std::string& connect_string, const clientid_t& id, std::chrono::milliseconds timeout) {
  zhandle_t* zh = nullptr;
  {
    const std::lock_guard c_lock(c_client_mutex());
    zh = zookeeper_init2(connect_string.c_str(), noop_watcher, static_cast<int>(timeout.count()), &id, nullptr, 0,
                         route_c_log);
  }
  if (!zh) return ZSYSTEMERROR;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int result = ZOPERATIONTIMEOUT;
  while (std::chrono::steady_clock::now() < deadline) {
    if (zoo_state(zh) == ZOO_CONNECTED_STATE) {
      result = ZOK;
      break;
    }
    if (zoo_state(zh) == ZOO_EXPIRED_SESSION_STATE) {
      result = ZOK;  // already expired: nothing left to do
      break;
    }
    int fd = -1, interest = 0;
    timeval tv{};
    {
      const std::lock_guard c_lock(c_client_mutex());
      zookeeper_interest(zh, &fd, &interest, &tv);
    }
    int wait_ms = static_cast<int>(tv.tv_sec * 1000 + tv.tv_usec / 1000);
    if (wait_ms > 50 || wait_ms < 0) wait_ms = 50;
    int events = 0;
    if (fd >= 0) {
      pollfd p{fd, 0, 0};
      if (interest & ZOOKEEPER_READ) p.events |= POLLIN;
      if (interest & ZOOKEEPER_WRITE) p.events |= POLLOUT;
      if (::poll(&p, 1, wait_ms) > 0) {
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) events |= ZOOKEEPER_READ;
        if (p.revents & POLLOUT) events |= ZOOKEEPER_WRITE;
      }
    } else {
      ::poll(nullptr, 0, wait_ms);
    }
    const std::lock_guard c_lock(c_client_mutex());
    zookeeper_process(zh, events);
  }
  const std::lock_guard c_lock(c_client_mutex());
  zookeeper_close(zh);
  return result;
}

}  // namespace zkr::detail
