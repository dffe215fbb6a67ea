// The client's pauses (see pauses.hpp).

#include "pauses.hpp"

namespace zkr::detail {

std::uint64_t Pauses::after(std::chrono::milliseconds d, unique_function<void()> k) {
  const auto id = next_id_++;
  auto t = std::make_shared<boost::asio::steady_timer>(ioc_, d);
  timers_.emplace(id, t);
  t->async_wait([this, id, t, k = std::move(k)](boost::system::error_code) mutable {
    timers_.erase(id);
    k();
  });
  return id;
}

void Pauses::wake(std::uint64_t id) {
  if (auto it = timers_.find(id); it != timers_.end()) it->second->cancel();
}

void Pauses::wake_all() {
  for (auto& [id, t] : timers_) t->cancel();
}

}  // namespace zkr::detail
