#pragma once
// `zkr watch`: follows a node, its children or its subtree through one of the library's caches and prints
// each event on stdout as it happens, one line per event (text or JSON).

#include <cstdint>
#include <string>

#include "common.hpp"

namespace zkr::cli {

/// What `zkr watch` follows.
enum class WatchScope {
  node,      ///< the node itself (a TreeCache of depth 0)
  children,  ///< its direct children (a PathChildrenCache)
  tree,      ///< the node and its whole subtree (a TreeCache)
};

struct WatchOptions {
  std::string path;
  WatchScope scope = WatchScope::node;
  bool json = false;          ///< one JSON object per line instead of text
  bool data = false;          ///< print each node's data too
  bool changes_only = false;  ///< do not print the nodes found by the first load, only what changes after
  std::uint64_t count = 0;    ///< exit 0 after this many node events (created, changed, deleted); 0 = never
};

/// `zkr watch [--children | --tree] [OPTIONS] PATH`: runs until `count` node events were printed (0), a
/// signal (128+N), stdout is closed (128+SIGPIPE) or an error (70). Connecting is bounded by
/// --connection-timeout (69); later connection losses are printed as events and waited out. Never writes to
/// ZooKeeper.
int watch(const CommonOptions& common, const WatchOptions& options);

}  // namespace zkr::cli
