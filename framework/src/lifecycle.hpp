#pragma once
// The client's life as one phase (a part of the client, see client.hpp): idle until `start`, then started; a
// client that stops connecting for good (the server refused its auth info, TLS refused) is given up; closed
// for good after `close`, from any phase. Readable on any thread; changed by the client's start, close and
// give-up only, each transition once.

#include <atomic>
#include <cstdint>
#include <zkr/framework/error.hpp>

namespace zkr::detail {

class Lifecycle {
 public:
  enum class Phase : std::uint8_t { idle, started, given_up, closed };

  Phase phase() const noexcept { return phase_.load(std::memory_order_acquire); }
  /// Started and not closed (given up counts: the client still answers, with the reason).
  bool is_open() const noexcept {
    const auto p = phase();
    return p == Phase::started || p == Phase::given_up;
  }
  bool closed() const noexcept { return phase() == Phase::closed; }
  bool given_up() const noexcept { return phase() == Phase::given_up; }
  /// Closed or given up: the client starts nothing more of its own (background deletes, reconnects).
  bool ended() const noexcept {
    const auto p = phase();
    return p == Phase::given_up || p == Phase::closed;
  }
  /// Why the client gave up (set before the phase says so, never changed after).
  error_code reason() const noexcept { return reason_; }
  /// What an operation gets from a client that is not open (`closed`, `not_started`); none when open.
  error_code gate() const noexcept {
    const auto p = phase();
    if (p == Phase::closed) return client_errc::closed;
    if (p == Phase::idle) return client_errc::not_started;
    return {};
  }

  /// idle → started; false in any other phase.
  bool start() noexcept { return advance(Phase::idle, Phase::started); }
  /// started → idle: the start failed before anything ran.
  void start_failed() noexcept { advance(Phase::started, Phase::idle); }
  /// started → given_up with `why`; false in any other phase.
  bool give_up(error_code why) noexcept {
    // The reason is written before the phase that publishes it, and only by the one caller that may: the
    // client's I/O thread.
    if (phase() != Phase::started) return false;
    reason_ = why;
    return advance(Phase::started, Phase::given_up);
  }
  /// Any phase → closed. Returns the phase it left: `closed` for every call but the first.
  Phase close() noexcept { return phase_.exchange(Phase::closed, std::memory_order_acq_rel); }
  /// idle → closed: a client closed before it started has nothing to finish.
  bool close_if_idle() noexcept { return advance(Phase::idle, Phase::closed); }

 private:
  bool advance(Phase from, Phase to) noexcept {
    return phase_.compare_exchange_strong(from, to, std::memory_order_acq_rel);
  }

  std::atomic<Phase> phase_{Phase::idle};
  error_code reason_;
};

}  // namespace zkr::detail
