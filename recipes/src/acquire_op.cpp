#include "acquire_op.hpp"

#include <zkr/recipes/detail/lease_core.hpp>

namespace zkr::detail {

void give_back(Core& core, std::vector<std::string> nodes, std::vector<Lease> leases,
               unique_function<void()> then) {
  struct Join {
    std::size_t left = 1;
    unique_function<void()> then;
    void answered() {
      if (--left == 0 && then) std::exchange(then, {})();
    }
  };
  auto join = std::make_shared<Join>();
  join->then = std::move(then);
  if (!nodes.empty()) {
    ++join->left;
    remove_nodes(core, std::move(nodes), [join](error_code) { join->answered(); });
  }
  for (auto& l : leases) {
    auto& st = access::state(l);
    if (!st || st->released) continue;
    ++join->left;
    st->release([join](error_code) { join->answered(); });  // runs its callback exactly once
  }
  join->answered();
}

}  // namespace zkr::detail
