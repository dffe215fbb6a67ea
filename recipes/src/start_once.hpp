#pragma once
// start_once: the start rule of every recipe object with `start()` (private to recipes/src).

#include <mutex>
#include <zkr/framework/error.hpp>

namespace zkr::detail {

/// latent -> started (under `mu`), the rule of every recipe object with `start()`:
/// `client_errc::invalid_argument` when already started (Curator's "Cannot be started more than once"),
/// `client_errc::closed` when closed.
template <class State>
error_code start_once(std::mutex& mu, State& state) {
  std::lock_guard lk(mu);
  if (state == State::started) return client_errc::invalid_argument;
  if (state == State::closed) return client_errc::closed;
  state = State::started;
  return {};
}

}  // namespace zkr::detail
