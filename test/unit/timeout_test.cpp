// detail::to_timeout: how the timed acquires read any std::chrono::duration.

#include <catch2/catch.hpp>
#include <chrono>
#include <zkr/recipes/detail/timeout.hpp>

using namespace std::chrono_literals;
using zkr::detail::max_timeout;
using zkr::detail::to_timeout;

TEST_CASE("to_timeout rounds up to whole milliseconds", "[timeout]") {
  CHECK(to_timeout(1s) == 1000ms);
  CHECK(to_timeout(500us) == 1ms);
  CHECK(to_timeout(1001us) == 2ms);
  CHECK(to_timeout(1.5s) == 1500ms);
  CHECK(to_timeout(std::chrono::duration<double>(0.0001)) == 1ms);
  CHECK(to_timeout(7ms) == 7ms);
}

TEST_CASE("to_timeout reads a negative or zero duration as one try and caps a huge one", "[timeout]") {
  CHECK(to_timeout(0ms) == 0ms);
  CHECK(to_timeout(-1s) == 0ms);
  CHECK(to_timeout(-0.5ms) == 0ms);
  CHECK(to_timeout(std::chrono::hours::min()) == 0ms);
  CHECK(to_timeout(std::chrono::hours::max()) == max_timeout);
  CHECK(to_timeout(std::chrono::nanoseconds::max()) == max_timeout);  // about 292 years
  CHECK(to_timeout(std::chrono::duration<double>(1e300)) == max_timeout);
}
