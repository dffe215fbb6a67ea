#pragma once
// The scenario registry: a name, what it measures, the options it reads, and the function that runs it. One
// scenario per file under scenarios/; the list (and so the order --help shows) is in registry.cpp.

#include <string>
#include <string_view>
#include <vector>

#include "context.hpp"

namespace zkr_bench {

struct Scenario {
  const char* name;
  /// One line: what it measures (zkr_bench --list-scenarios).
  const char* help;
  /// The options it reads besides --connect, --scenario, --path, --timeout-s, --session-timeout-ms, --mntr,
  /// --handler-executor, --tls-* and --sasl-*, which every scenario honours.
  std::vector<const char*> options;
  Result (*run)(Context&);
};

/// Every scenario, in the order --help lists them.
const std::vector<Scenario>& scenarios();
/// The scenario named `name`, or nullptr.
const Scenario* find_scenario(std::string_view name);
/// The scenario names, comma separated, wrapped at `width` columns, every line but the first indented under
/// `prefix`; ends with a newline.
std::string scenario_names_wrapped(std::string_view prefix, std::size_t width);

// The scenarios (scenarios/<name>.cpp).
Scenario uncontended_scenario();
Scenario contended_scenario();
Scenario drain_scenario();
Scenario semaphore_mutex_scenario();
Scenario rwlock_scenario();
Scenario multilock_scenario();
Scenario async10k_scenario();
Scenario failover_scenario();
Scenario async_scenario();
Scenario slow_handler_scenario();
Scenario increments_scenario();
Scenario cache_populate_scenario();
Scenario cache_init_scenario();
Scenario cache_events_scenario();
Scenario connect_scenario();

}  // namespace zkr_bench
