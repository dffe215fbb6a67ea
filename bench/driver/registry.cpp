#include "scenario.hpp"

namespace zkr_bench {

const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> all{
      uncontended_scenario(), contended_scenario(),    drain_scenario(),      semaphore_mutex_scenario(),
      rwlock_scenario(),      multilock_scenario(),    async10k_scenario(),   failover_scenario(),
      async_scenario(),       slow_handler_scenario(), increments_scenario(), cache_populate_scenario(),
      cache_init_scenario(),  cache_events_scenario(), connect_scenario()};
  return all;
}

const Scenario* find_scenario(std::string_view name) {
  for (const auto& s : scenarios()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

std::string scenario_names_wrapped(std::string_view prefix, std::size_t width) {
  std::string out(prefix), line_start_pad(prefix.size(), ' ');
  std::size_t column = prefix.size();
  const auto& all = scenarios();
  for (std::size_t i = 0; i < all.size(); ++i) {
    std::string word = all[i].name;
    if (i + 1 < all.size()) word += ',';
    const bool first_on_line = column == prefix.size();
    if (!first_on_line && column + 1 + word.size() > width) {
      out += "\n" + line_start_pad;
      column = prefix.size();
    } else if (!first_on_line) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
  }
  return out + "\n";
}

}  // namespace zkr_bench
