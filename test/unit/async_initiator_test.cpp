// The one asynchronous initiator (`detail::async_run`, docs/async.md) over the fake core: a refused operation
// completes posted, never inline; each cancellation kind honours its types and ignores the others; a late
// result goes to `abandon`; `with_diagnostics` carries the operation and the path.
#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <thread>
#include <zkr/framework/detail/async.hpp>

#include "fake_core.hpp"

using namespace zkr;
using detail::Cancellation;
namespace asio = boost::asio;

namespace {

/// An operation that keeps its callback and stop signal for the test to complete later.
struct Parked {
  std::optional<detail::unique_function<void(error_code, int)>> cb;
  detail::StopPtr stop;
  bool started = false;
};

auto park(std::shared_ptr<Parked> p) {
  return [p](detail::unique_function<void(error_code, int)> cb, detail::StopPtr stop) {
    p->started = true;
    p->cb.emplace(std::move(cb));
    p->stop = std::move(stop);
  };
}

}  // namespace

TEST_CASE("async_run: a refused operation completes its handler posted, and never starts", "[unit][async]") {
  auto core = std::make_shared<fake::FakeCore>();
  auto parked = std::make_shared<Parked>();
  std::optional<error_code> got;
  detail::async_run<int>(
      core, {"get_data", "/p", Cancellation::read, client_errc::not_acquired},
      [&](error_code ec, int) { got = ec; }, park(parked));
  CHECK_FALSE(got);  // not inline
  REQUIRE(core->run_until([&] { return got.has_value(); }));
  CHECK(*got == client_errc::not_acquired);
  CHECK_FALSE(parked->started);
  core->shutdown();
}

TEST_CASE("async_run: each cancellation kind honours its types", "[unit][async][cancel]") {
  auto core = std::make_shared<fake::FakeCore>();
  struct Case {
    Cancellation kind;
    asio::cancellation_type ignored;
    asio::cancellation_type honoured;
  };
  for (auto c :
       {Case{Cancellation::read, asio::cancellation_type::none, asio::cancellation_type::total},
        Case{Cancellation::write, asio::cancellation_type::partial, asio::cancellation_type::terminal},
        Case{Cancellation::write, asio::cancellation_type::total, asio::cancellation_type::terminal},
        Case{Cancellation::cleanup, asio::cancellation_type::total, asio::cancellation_type::partial}}) {
    CAPTURE(static_cast<int>(c.kind), static_cast<int>(c.ignored), static_cast<int>(c.honoured));
    auto parked = std::make_shared<Parked>();
    asio::cancellation_signal sig;
    std::optional<std::pair<error_code, int>> got;
    std::optional<int> abandoned;
    detail::async_run<int>(
        core, {"op", "/p", c.kind},
        asio::bind_cancellation_slot(sig.slot(), [&](error_code ec, int v) { got.emplace(ec, v); }),
        park(parked), [&](error_code, int v) { abandoned = v; });
    REQUIRE(core->run_until([&] { return parked->started; }));
    REQUIRE(parked->stop);
    if (c.ignored != asio::cancellation_type::none) {
      sig.emit(c.ignored);
      core->settle();
      CHECK_FALSE(got);
      CHECK_FALSE(parked->stop->requested());
    }
    sig.emit(c.honoured);
    core->settle();
    CHECK(parked->stop->requested());
    if (c.kind == Cancellation::cleanup) {
      CHECK_FALSE(got);  // completes only after its cleanup
      (*parked->cb)(asio::error::operation_aborted, 0);
      core->settle();
      REQUIRE(got);
      CHECK(got->first == asio::error::operation_aborted);
      CHECK_FALSE(abandoned);
    } else {
      REQUIRE(got);  // at once
      CHECK(got->first == asio::error::operation_aborted);
      (*parked->cb)({}, 7);  // the late result
      core->settle();
      CHECK(abandoned == 7);
    }
  }
  core->shutdown();
}

TEST_CASE("async_run: with_diagnostics gives zkr::Error with the operation and the path", "[unit][async]") {
  auto core = std::make_shared<fake::FakeCore>();
  auto parked = std::make_shared<Parked>();
  std::exception_ptr failure;
  std::optional<int> value;
  detail::async_run<int>(core, {"get_data", "/p", Cancellation::read},
                         with_diagnostics([&](std::exception_ptr e, int v) {
                           failure = e;
                           value = v;
                         }),
                         park(parked));
  REQUIRE(core->run_until([&] { return parked->started; }));
  (*parked->cb)(zk_errc::no_node, 0);
  REQUIRE(core->run_until([&] { return value.has_value(); }));
  REQUIRE(failure);
  try {
    std::rethrow_exception(failure);
  } catch (const Error& e) {
    CHECK(e.code() == zk_errc::no_node);
    CHECK(e.operation() == "get_data");
    CHECK(e.path() == "/p");
  }
  core->shutdown();
}

TEST_CASE("async_run: with_diagnostics keeps the inner handler's cancellation slot",
          "[unit][async][cancel]") {
  auto core = std::make_shared<fake::FakeCore>();
  auto parked = std::make_shared<Parked>();
  asio::cancellation_signal sig;
  std::exception_ptr failure;
  bool done = false;
  detail::async_run<int>(core, {"acquire", "/lock", Cancellation::cleanup},
                         with_diagnostics(asio::bind_cancellation_slot(sig.slot(),
                                                                       [&](std::exception_ptr e, int) {
                                                                         failure = e;
                                                                         done = true;
                                                                       })),
                         park(parked));
  REQUIRE(core->run_until([&] { return parked->started; }));
  sig.emit(asio::cancellation_type::terminal);
  core->settle();
  REQUIRE(parked->stop->requested());
  (*parked->cb)(asio::error::operation_aborted, 0);
  REQUIRE(core->run_until([&] { return done; }));
  REQUIRE(failure);
  CHECK_THROWS_AS(std::rethrow_exception(failure), Error);
  core->shutdown();
}

TEST_CASE(
    "run_blocking: the operation's result, closed when its callback is dropped uncalled, and no wait on the "
    "I/O thread",
    "[unit][async]") {
  auto core = std::make_shared<fake::FakeCore>();
  struct Result {
    error_code ec;
    int value = -1;
  };
  auto blocking = [&](auto start) {
    std::atomic<bool> returned{false};
    Result r;
    std::thread caller([&] {
      r.value = detail::run_blocking<int>(*core, std::move(start), r.ec);
      returned = true;
    });
    const bool ran = core->run_until([&] { return returned.load(); });
    caller.join();
    CHECK(ran);
    return r;
  };

  const auto done = blocking([](detail::unique_function<void(error_code, int)> cb) { cb({}, 7); });
  CHECK_FALSE(done.ec);
  CHECK(done.value == 7);

  const auto failed =
      blocking([](detail::unique_function<void(error_code, int)> cb) { cb(zk_errc::no_node, 0); });
  CHECK(failed.ec == zk_errc::no_node);

  // The operation drops its callback (as when the I/O thread ends before running it): the caller wakes.
  const auto dropped = blocking([](detail::unique_function<void(error_code, int)> cb) { cb = nullptr; });
  CHECK(dropped.ec == client_errc::closed);
  CHECK(dropped.value == 0);

  std::optional<error_code> on_io;
  asio::post(core->context(), [&] {
    error_code ec;
    (void)detail::run_blocking<int>(
        *core, [](detail::unique_function<void(error_code, int)>) {}, ec);
    on_io = ec;
  });
  REQUIRE(core->run_until([&] { return on_io.has_value(); }));
  CHECK(*on_io == client_errc::would_deadlock);
  core->shutdown();
}
