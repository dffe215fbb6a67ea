// Smoke test of an installed zkrecipes: builds against the exported targets and exercises the parts that
// need no ZooKeeper server.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <zkr/framework/paths.hpp>
#include <zkr/framework/retry.hpp>
#include <zkr/testing/testing_server.hpp>

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

  const auto mntr = zkr::testing::parse_mntr("zk_server_state\tstandalone\n");
  check(mntr.count("zk_server_state") == 1, "zkrecipes::testing links");

  if (failures != 0) return EXIT_FAILURE;
  std::cout << "zkrecipes test_package: OK (" << (why ? *why : std::string()) << ")\n";
  return EXIT_SUCCESS;
}
