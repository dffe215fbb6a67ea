#pragma once
// Helpers of the multi-lock integration tests: lock paths under a base, and a client holding a multi-lock.

#include <algorithm>
#include <boost/asio/use_future.hpp>
#include <memory>
#include <string>
#include <vector>

#include "fixture.hpp"

namespace zkr::test {

/// `n` lock paths under `base`: "<base>/l0" ... "<base>/l<n-1>".
inline std::vector<std::string> paths_of(const std::string& base, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(base + "/l" + std::to_string(i));
  return out;
}

/// A client holding a multi-lock over `n` fresh paths under `base`, through the asynchronous form (so that
/// the `MultiLease` can be released from any thread).
struct HeldMulti {
  ServerFixture fx;
  std::unique_ptr<CuratorFramework> c1 = fx.client();
  std::vector<std::string> paths;
  std::unique_ptr<InterProcessMultiLock> multi;
  MultiLease lease;

  HeldMulti(const std::string& base, int n, bool persistent_dirs = false) : paths(paths_of(base, n)) {
    // Persistent directories, where a test reads them after the release: the server reaps empty containers.
    if (persistent_dirs)
      for (const auto& p : paths) fx.admin->create(p, {.creating_parents = true});
    multi = std::make_unique<InterProcessMultiLock>(*c1, paths);
    lease = multi->async_acquire(boost::asio::use_future).get();
  }
  bool all_free() {
    return std::all_of(paths.begin(), paths.end(), [&](auto& p) { return fx.children(p).empty(); });
  }
};

}  // namespace zkr::test
