#include <spdlog/logger.h>

#include <zkr/recipes/shared_count.hpp>

namespace zkr {

SharedCount::SharedCount(CuratorFramework& client, std::string path, std::int32_t seed)
    : value_(client, std::move(path), detail::encode_big_endian(seed, width)) {}

void SharedCount::start() { value_.start(); }
void SharedCount::start(error_code& ec) { value_.start(ec); }
void SharedCount::close() noexcept { value_.close(); }

VersionedValue<std::int32_t> SharedCount::versioned_count(error_code& ec) const {
  ec = {};
  auto v = value_.versioned_value();
  auto n = detail::decode_big_endian(v.value, width);
  if (!n) {
    ec = client_errc::corrupted_data;
    return {v.version, 0};
  }
  return {v.version, static_cast<std::int32_t>(*n)};
}

VersionedValue<std::int32_t> SharedCount::versioned_count() const {
  error_code ec;
  auto v = versioned_count(ec);
  throw_if(ec, "SharedCount::count", path());
  return v;
}

std::int32_t SharedCount::count(error_code& ec) const { return versioned_count(ec).value; }
std::int32_t SharedCount::count() const { return versioned_count().value; }

void SharedCount::set_count(std::int32_t n) { value_.set_value(detail::encode_big_endian(n, width)); }
void SharedCount::set_count(std::int32_t n, error_code& ec) {
  value_.set_value(detail::encode_big_endian(n, width), ec);
}

bool SharedCount::try_set_count(const VersionedValue<std::int32_t>& previous, std::int32_t n) {
  return value_.try_set_value(as_bytes(previous), detail::encode_big_endian(n, width));
}
bool SharedCount::try_set_count(const VersionedValue<std::int32_t>& previous, std::int32_t n,
                                error_code& ec) {
  return value_.try_set_value(as_bytes(previous), detail::encode_big_endian(n, width), ec);
}

std::uint64_t SharedCount::add_listener(SharedCountListener listener) {
  return add_listener(std::move(listener), value_.core()->completion_executor());
}

std::uint64_t SharedCount::add_listener(SharedCountListener listener, boost::asio::any_io_executor executor) {
  SharedValueListener l;
  if (listener.count_has_changed)
    l.value_has_changed = [f = std::move(listener.count_has_changed), log = value_.core()->logger(),
                           path = path()](const std::string& bytes) {
      if (auto n = detail::decode_big_endian(bytes, width)) return f(static_cast<std::int32_t>(*n));
      log->warn("SharedCount {}: the node holds {} bytes, not a count (4 bytes)", path, bytes.size());
    };
  l.state_changed = std::move(listener.state_changed);
  return value_.add_listener(std::move(l), std::move(executor));
}

void SharedCount::remove_listener(std::uint64_t id) { value_.remove_listener(id); }

}  // namespace zkr
