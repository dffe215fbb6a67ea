#pragma once
/// \file
/// `ChildData`: one cached node (Curator's `ChildData`): its path, its Stat and, when the cache keeps data,
/// its bytes.

#include <string>
#include <zkr/framework/types.hpp>

namespace zkr {

/// One node as a cache last read it: full path (without the client's namespace), Stat and data. `data` is
/// empty when the cache does not keep data (`cache_data(false)`, Curator's `dataNotCached()`), and for a node
/// whose data is empty: `stat.data_length` tells them apart. Ordered by path, as Curator's `compareTo`;
/// equal when path, Stat and data are (Curator's `equals`).
struct ChildData {
  std::string path;
  Stat stat;
  std::string data;

  friend bool operator==(const ChildData& a, const ChildData& b) noexcept {
    return a.path == b.path && a.data == b.data && a.stat.czxid == b.stat.czxid &&
           a.stat.mzxid == b.stat.mzxid && a.stat.version == b.stat.version &&
           a.stat.cversion == b.stat.cversion && a.stat.aversion == b.stat.aversion &&
           a.stat.pzxid == b.stat.pzxid && a.stat.num_children == b.stat.num_children &&
           a.stat.ephemeral_owner == b.stat.ephemeral_owner && a.stat.data_length == b.stat.data_length &&
           a.stat.ctime == b.stat.ctime && a.stat.mtime == b.stat.mtime;
  }
  friend bool operator<(const ChildData& a, const ChildData& b) noexcept { return a.path < b.path; }
};

}  // namespace zkr
