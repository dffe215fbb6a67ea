#pragma once
// Fault at every step, generated (Boost.MySQL's `check_network_errors`), for the state-machine tests over
// FakeCore: a scenario runs once, its steps are read from the fake's request log, and it is replayed failing
// each step in turn.

#include <catch2/catch.hpp>
#include <initializer_list>
#include <vector>

#include "fake_core.hpp"

namespace fake {

/// Runs `scenario(fixture)` once over a fresh `Fixture` (it must succeed), takes its steps from the fake's
/// request log, then replays it over a fresh `Fixture` for each step and each code, failing that step with
/// that code; each replay must reach the failed step and complete, and `check(fixture, run, code, step)`
/// judges it. `scenario` returns a run whose `out` is the acquire's outcome (`done()`, `ec`).
template <class Fixture, class Scenario, class Check>
void for_each_failed_step(Scenario scenario, std::initializer_list<zkr::error_code> codes, Check check,
                          bool (*skip)(const FaultStep&, zkr::error_code) = nullptr) {
  std::vector<FaultStep> steps;
  {
    Fixture clean;
    auto run = scenario(clean);
    REQUIRE(run.out->done());
    REQUIRE_FALSE(run.out->ec);
    steps = fault_steps(*clean.core);
  }
  REQUIRE_FALSE(steps.empty());
  for (const auto& step : steps) {
    for (const auto& code : codes) {
      if (skip && skip(step, code)) continue;
      INFO("failing " << to_string(step) << " with " << code.message() << " (of " << steps.size()
                      << " steps)");
      Fixture f;
      fail(*f.core, step, code);
      auto run = scenario(f);
      INFO(f.core->describe_log());
      CHECK(f.core->faults_consumed());
      REQUIRE(run.out->done());
      check(f, run, code, step);
    }
  }
}

/// A delete of our own node that the guaranteed delete does not keep (a failure that is not retryable, such
/// as no_auth): the node stays queued until its session ends, and a later acquire of the same process queues
/// behind it. A known limit of the recipes (the background delete keeps only retryable failures), left out
/// of the generated runs that would wait on it.
inline bool unkept_delete(const FaultStep& step, zkr::error_code code) {
  return (step.op == Op::remove || step.op == Op::multi) && !zkr::is_retryable(code);
}

}  // namespace fake
