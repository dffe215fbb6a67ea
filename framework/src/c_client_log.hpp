#pragma once
// The C client's log routed into the clients' spdlog loggers (defined in zk_handle.cpp, with the rest of the
// C-client helpers). Part of the C client's transport, but free of <zookeeper.h>, so that its unit test
// (test/unit/c_client_log_test.cpp) needs none of the C client.

#include <spdlog/logger.h>

namespace zkr::detail {

/// Routes the C client's log of the current thread to `logger` (null: to the fallback below).
void set_thread_log_target(spdlog::logger* logger) noexcept;
/// The multi-threaded C client logs from threads of its own, which have no target: their lines go to the
/// newest logger added here and not yet removed (a client's, while its handle is open), or nowhere.
void add_log_fallback(spdlog::logger* logger);
void remove_log_fallback(spdlog::logger* logger) noexcept;
/// The C client's log callback, routing to the thread's target.
void route_c_log(const char* message);
/// Points the C client's process-wide log stream (used for lines of a handle without a log callback) at
/// `route_c_log`, once. `zookeeper_init_ssl` takes no log callback: without this, its first lines would go to
/// stderr before the session sets one.
void route_c_log_stream() noexcept;

}  // namespace zkr::detail
