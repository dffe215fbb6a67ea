#pragma once
// Every framework operation through each of its twins (throwing, error_code, callback, use_future,
// use_awaitable), with one `Outcome` whichever ran; a throwing twin's error must name the operation and path.

#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <zkr/framework/curator_framework.hpp>

#include "completion_styles.hpp"

namespace zkr::itest {

enum class Twin { throwing, error_code, callback, future, awaitable };
inline constexpr Twin all_twins[] = {Twin::throwing, Twin::error_code, Twin::callback, Twin::future,
                                     Twin::awaitable};

inline std::string twin_name(Twin t) {
  switch (t) {
    case Twin::throwing:
      return "throwing";
    case Twin::error_code:
      return "error_code";
    case Twin::callback:
      return "callback";
    case Twin::future:
      return "future";
    case Twin::awaitable:
      return "awaitable";
  }
  return "?";
}

/// Runs a throwing twin; an `zkr::Error` becomes the outcome's code (and must name `op` and `path`).
template <class T, class F>
Outcome<T> catching(F&& f, const std::string& op, const std::string& path) {
  try {
    return Outcome<T>{{}, f()};
  } catch (const zkr::Error& e) {
    CHECK(e.operation() == op);
    CHECK(e.path() == path);
    return Outcome<T>{e.code(), T{}};
  }
}
template <class F>
error_code catching_void(F&& f, const std::string& op, const std::string& path) {
  try {
    f();
    return {};
  } catch (const zkr::Error& e) {
    CHECK(e.operation() == op);
    CHECK(e.path() == path);
    return e.code();
  }
}

inline Outcome<CreateResult> op_create(CuratorFramework& c, Twin t, const std::string& path,
                                       const CreateOptions& o = {}) {
  switch (t) {
    case Twin::throwing:
      return catching<CreateResult>([&] { return c.create(path, o); }, "create", path);
    case Twin::error_code: {
      error_code ec;
      auto r = c.create(path, o, ec);
      return {ec, std::move(r)};
    }
    case Twin::callback:
      return with_callback<CreateResult>([&](auto cb) { c.async_create(path, o, std::move(cb)); });
    case Twin::future:
      return from_future(c.async_create(path, o, asio::use_future));
    case Twin::awaitable:
      return with_awaitable<CreateResult>([&]() -> asio::awaitable<CreateResult> {
        co_return co_await c.async_create(path, o, asio::use_awaitable);
      });
  }
  return {};
}

inline error_code op_remove(CuratorFramework& c, Twin t, const std::string& path,
                            const DeleteOptions& o = {}) {
  switch (t) {
    case Twin::throwing:
      return catching_void([&] { c.remove(path, o); }, "delete", path);
    case Twin::error_code: {
      error_code ec;
      c.remove(path, o, ec);
      return ec;
    }
    case Twin::callback:
      return with_void_callback([&](auto cb) { c.async_remove(path, o, std::move(cb)); });
    case Twin::future:
      return from_void_future(c.async_remove(path, o, asio::use_future));
    case Twin::awaitable:
      return with_void_awaitable(
          [&]() -> asio::awaitable<void> { co_await c.async_remove(path, o, asio::use_awaitable); });
  }
  return {};
}

inline Outcome<std::optional<Stat>> op_exists(CuratorFramework& c, Twin t, const std::string& path,
                                              Watcher w = {}) {
  using R = std::optional<Stat>;
  switch (t) {
    case Twin::throwing:
      return catching<R>([&] { return c.exists(path, w); }, "exists", path);
    case Twin::error_code: {
      error_code ec;
      auto r = c.exists(path, w, ec);
      return {ec, r};
    }
    case Twin::callback:
      return with_callback<R>([&](auto cb) { c.async_exists(path, w, std::move(cb)); });
    case Twin::future:
      return from_future(c.async_exists(path, w, asio::use_future));
    case Twin::awaitable:
      return with_awaitable<R>(
          [&]() -> asio::awaitable<R> { co_return co_await c.async_exists(path, w, asio::use_awaitable); });
  }
  return {};
}

inline Outcome<NodeData> op_get_data(CuratorFramework& c, Twin t, const std::string& path, Watcher w = {}) {
  switch (t) {
    case Twin::throwing:
      return catching<NodeData>([&] { return c.get_data(path, w); }, "get_data", path);
    case Twin::error_code: {
      error_code ec;
      auto r = c.get_data(path, w, ec);
      return {ec, std::move(r)};
    }
    case Twin::callback:
      return with_callback<NodeData>([&](auto cb) { c.async_get_data(path, w, std::move(cb)); });
    case Twin::future:
      return from_future(c.async_get_data(path, w, asio::use_future));
    case Twin::awaitable:
      return with_awaitable<NodeData>([&]() -> asio::awaitable<NodeData> {
        co_return co_await c.async_get_data(path, w, asio::use_awaitable);
      });
  }
  return {};
}

inline Outcome<std::vector<std::string>> op_get_children(CuratorFramework& c, Twin t, const std::string& path,
                                                         Watcher w = {}) {
  using R = std::vector<std::string>;
  switch (t) {
    case Twin::throwing:
      return catching<R>([&] { return c.get_children(path, w); }, "get_children", path);
    case Twin::error_code: {
      error_code ec;
      auto r = c.get_children(path, w, ec);
      return {ec, std::move(r)};
    }
    case Twin::callback:
      return with_callback<R>([&](auto cb) { c.async_get_children(path, w, std::move(cb)); });
    case Twin::future:
      return from_future(c.async_get_children(path, w, asio::use_future));
    case Twin::awaitable:
      return with_awaitable<R>([&]() -> asio::awaitable<R> {
        co_return co_await c.async_get_children(path, w, asio::use_awaitable);
      });
  }
  return {};
}

inline Outcome<Stat> op_set_data(CuratorFramework& c, Twin t, const std::string& path,
                                 const std::string& data, int version = -1) {
  switch (t) {
    case Twin::throwing:
      return catching<Stat>([&] { return c.set_data(path, data, version); }, "set_data", path);
    case Twin::error_code: {
      error_code ec;
      auto r = c.set_data(path, data, version, ec);
      return {ec, r};
    }
    case Twin::callback:
      return with_callback<Stat>([&](auto cb) { c.async_set_data(path, data, version, std::move(cb)); });
    case Twin::future:
      return from_future(c.async_set_data(path, data, version, asio::use_future));
    case Twin::awaitable:
      return with_awaitable<Stat>([&]() -> asio::awaitable<Stat> {
        co_return co_await c.async_set_data(path, data, version, asio::use_awaitable);
      });
  }
  return {};
}

inline Outcome<AclResult> op_get_acl(CuratorFramework& c, Twin t, const std::string& path) {
  switch (t) {
    case Twin::throwing:
      return catching<AclResult>([&] { return c.get_acl(path); }, "get_acl", path);
    case Twin::error_code: {
      error_code ec;
      auto r = c.get_acl(path, ec);
      return {ec, std::move(r)};
    }
    case Twin::callback:
      return with_callback<AclResult>([&](auto cb) { c.async_get_acl(path, std::move(cb)); });
    case Twin::future:
      return from_future(c.async_get_acl(path, asio::use_future));
    case Twin::awaitable:
      return with_awaitable<AclResult>([&]() -> asio::awaitable<AclResult> {
        co_return co_await c.async_get_acl(path, asio::use_awaitable);
      });
  }
  return {};
}

inline Outcome<Stat> op_set_acl(CuratorFramework& c, Twin t, const std::string& path, const AclList& acl,
                                int version = -1) {
  switch (t) {
    case Twin::throwing:
      return catching<Stat>([&] { return c.set_acl(path, acl, version); }, "set_acl", path);
    case Twin::error_code: {
      error_code ec;
      auto r = c.set_acl(path, acl, version, ec);
      return {ec, r};
    }
    case Twin::callback:
      return with_callback<Stat>([&](auto cb) { c.async_set_acl(path, acl, version, std::move(cb)); });
    case Twin::future:
      return from_future(c.async_set_acl(path, acl, version, asio::use_future));
    case Twin::awaitable:
      return with_awaitable<Stat>([&]() -> asio::awaitable<Stat> {
        co_return co_await c.async_set_acl(path, acl, version, asio::use_awaitable);
      });
  }
  return {};
}

inline Outcome<std::vector<OpResult>> op_multi(CuratorFramework& c, Twin t, const std::vector<Op>& ops) {
  using R = std::vector<OpResult>;
  const std::string first = ops.empty() ? "" : ops.front().path;
  switch (t) {
    case Twin::throwing:
      return catching<R>([&] { return c.multi(ops); }, "multi", first);
    case Twin::error_code: {
      error_code ec;
      auto r = c.multi(ops, ec);
      return {ec, std::move(r)};
    }
    case Twin::callback:
      return with_callback<R>([&](auto cb) { c.async_multi(ops, std::move(cb)); });
    case Twin::future:
      return from_future(c.async_multi(ops, asio::use_future));
    case Twin::awaitable:
      return with_awaitable<R>(
          [&]() -> asio::awaitable<R> { co_return co_await c.async_multi(ops, asio::use_awaitable); });
  }
  return {};
}

inline error_code op_sync(CuratorFramework& c, Twin t, const std::string& path) {
  switch (t) {
    case Twin::throwing:
      return catching_void([&] { c.sync(path); }, "sync", path);
    case Twin::error_code: {
      error_code ec;
      c.sync(path, ec);
      return ec;
    }
    case Twin::callback:
      return with_void_callback([&](auto cb) { c.async_sync(path, std::move(cb)); });
    case Twin::future:
      return from_void_future(c.async_sync(path, asio::use_future));
    case Twin::awaitable:
      return with_void_awaitable(
          [&]() -> asio::awaitable<void> { co_await c.async_sync(path, asio::use_awaitable); });
  }
  return {};
}

inline error_code op_remove_watches(CuratorFramework& c, Twin t, const std::string& path) {
  switch (t) {
    case Twin::throwing:
      return catching_void([&] { c.remove_watches(path); }, "remove_watches", path);
    case Twin::error_code: {
      error_code ec;
      c.remove_watches(path, ec);
      return ec;
    }
    case Twin::callback:
      return with_void_callback([&](auto cb) { c.async_remove_watches(path, std::move(cb)); });
    case Twin::future:
      return from_void_future(c.async_remove_watches(path, asio::use_future));
    case Twin::awaitable:
      return with_void_awaitable(
          [&]() -> asio::awaitable<void> { co_await c.async_remove_watches(path, asio::use_awaitable); });
  }
  return {};
}

/// Every operation on `path` through twin `t`; returns each one's error.
inline std::vector<std::pair<std::string, error_code>> every_op(CuratorFramework& c, Twin t,
                                                                const std::string& path,
                                                                const std::string& data = {}) {
  std::vector<std::pair<std::string, error_code>> out;
  out.emplace_back("create", op_create(c, t, path, {.data = data}).ec);
  out.emplace_back("create seq",
                   op_create(c, t, path, {.mode = CreateMode::ephemeral_sequential, .data = data}).ec);
  out.emplace_back("delete", op_remove(c, t, path));
  out.emplace_back("delete children", op_remove(c, t, path, {.deleting_children = true}));
  out.emplace_back("exists", op_exists(c, t, path, [](const WatchedEvent&) {}).ec);
  out.emplace_back("get_data", op_get_data(c, t, path).ec);
  out.emplace_back("get_children", op_get_children(c, t, path).ec);
  out.emplace_back("set_data", op_set_data(c, t, path, data).ec);
  out.emplace_back("multi create", op_multi(c, t, {Op::create(path, data)}).ec);
  out.emplace_back("multi set", op_multi(c, t, {Op::set_data(path, data)}).ec);
  out.emplace_back("multi delete", op_multi(c, t, {Op::remove(path)}).ec);
  out.emplace_back("multi check", op_multi(c, t, {Op::check(path, 0)}).ec);
  out.emplace_back("sync", op_sync(c, t, path));
  out.emplace_back("remove_watches", op_remove_watches(c, t, path));
  return out;
}

}  // namespace zkr::itest
