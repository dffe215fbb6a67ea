// Smoke test of an installed zkrecipes: builds against the exported targets and exercises the parts that
// need no ZooKeeper server, one symbol from each library (framework, drivers, recipes, testing), so a shared
// build loads all four. With ZKR_EXPECT_ZOOKEEPER_TLS (0 or 1, from CMakeLists.txt), it also checks that the
// library linked speaks TLS exactly when the package says it does; with ZKR_EXPECT_SASL, the same of SASL.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>
#include <zkr/drivers/lock_driver.hpp>
#include <zkr/framework/paths.hpp>
#include <zkr/framework/retry.hpp>
#include <zkr/framework/transport.hpp>
#include <zkr/recipes/lease.hpp>
#include <zkr/testing/testing_server.hpp>
#ifdef ZKR_EXPECT_ZOOKEEPER_TLS
#include <zkr/framework/curator_framework.hpp>  // zkr::tls_supported()
#endif
#ifdef ZKR_EXPECT_SASL
#include <zkr/framework/sasl.hpp>  // zkr::sasl_supported()
#endif

int main() {
  int failures = 0;
  auto check = [&](bool ok, const std::string& what) {
    if (!ok) {
      std::cerr << "test_package: FAILED: " << what << '\n';
      ++failures;
    }
  };

  check(!zkr::path_error("/locks/my-lock").has_value(), "a valid path is accepted");
  const auto why = zkr::path_error("/locks//double");
  check(why.has_value(), "an empty segment is rejected");
  check(zkr::make_path("/locks", "child") == "/locks/child", "make_path joins with one slash");

  const zkr::ExponentialBackoffRetry retry(std::chrono::milliseconds{100}, 3);
  const auto sleep = retry.allow_retry(0, std::chrono::milliseconds{0});
  check(sleep.has_value() && sleep->count() >= 100 && sleep->count() < 200,
        "the first retry of ExponentialBackoffRetry(100 ms, 3) sleeps 100..199 ms");
  check(!retry.allow_retry(3, std::chrono::milliseconds{0}).has_value(), "no fourth retry");

  // Sorted by sequence number, as the engine hands them to a driver.
  const std::vector<std::string> children{"_c_a-lock-0000000000", "_c_b-lock-0000000001"};
  const auto first = zkr::standard_lock_driver().gets_the_lock(children, "_c_a-lock-0000000000", 1);
  const auto second = zkr::standard_lock_driver().gets_the_lock(children, "_c_b-lock-0000000001", 1);
  check(first && first->gets_the_lock, "the lowest sequence number holds the lock (drivers)");
  check(second && !second->gets_the_lock && second->path_to_watch == "_c_a-lock-0000000000",
        "the next waiter watches the holder (drivers)");
  check(zkr::to_string(zkr::LeaseStatus::maybe_lost) == "maybe_lost", "zkrecipes::recipes links");

  const auto mntr = zkr::testing::parse_mntr("zk_server_state\tstandalone\n");
  check(mntr.count("zk_server_state") == 1, "zkrecipes::testing links");

  // Every package carries the native transport (a C-client one beside its C client, by default).
  check(zkr::transport_available(zkr::Transport::native), "the native transport is carried");
  check(zkr::transport_available(zkr::build_default_transport()), "the default transport is carried");

#ifdef ZKR_EXPECT_ZOOKEEPER_TLS
  check(zkr::tls_supported() == (ZKR_EXPECT_ZOOKEEPER_TLS != 0),
        ZKR_EXPECT_ZOOKEEPER_TLS != 0 ? "the package was built with TLS: zkr::tls_supported() is true"
                                      : "the package was built without TLS: zkr::tls_supported() is false");
#endif
#ifdef ZKR_EXPECT_SASL
  // Asked of the native transport, which every package carries: the C client's SASL depends on its flavour
  // (Conan Center's multi-threaded one refuses it, docs/sasl.md).
  std::cout << "zkr::sasl_supported(native): " << zkr::sasl_supported(zkr::Transport::native)
            << ", default transport: " << zkr::sasl_supported() << '\n';
  check(zkr::sasl_supported(zkr::Transport::native) == (ZKR_EXPECT_SASL != 0),
        ZKR_EXPECT_SASL != 0 ? "the package was built with SASL: the native transport has it"
                             : "the package was built without SASL: no transport has it");
#endif

  if (failures != 0) return EXIT_FAILURE;
  std::cout << "zkrecipes test_package: OK (" << (why ? *why : std::string()) << ")\n";
  return EXIT_SUCCESS;
}
