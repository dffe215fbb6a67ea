#pragma once
// The watch registry (a part of the client, see client.hpp): the one-shot watches the reads set, keyed by an
// id that travels with the request to the session, each fired once by the session's watch event, forgotten on
// request or when its read failed, and all taken at once when the session goes. I/O thread only.

#include <array>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>
#include <zkr/framework/detail/core.hpp>

#include "session.hpp"

namespace zkr::detail {

class WatchRegistry {
 public:
  struct Watch {
    WatchCallback cb;
    std::string path;  // un-namespaced
    zk::WatchKind kind = zk::WatchKind::data;
  };

  /// Registers `cb` for a read of `path` (none: returns 0).
  WatchId add(WatchCallback cb, std::string path, zk::WatchKind kind);
  /// Forgets `id`; returns its path and kind when it was registered (the server still holds it).
  std::optional<std::pair<std::string, zk::WatchKind>> forget(WatchId id);
  /// Whether another watch of ours of `kind` on `path` remains (set, or being set by a read in flight). The
  /// server keeps one watch per path, kind and session, so a removal sent for one of ours while another
  /// remains would take the other's away too: it must stay local.
  bool watching(const std::string& path, zk::WatchKind kind) const;
  /// Forgets every watch on `path`.
  void forget_path(const std::string& path);
  /// Runs and forgets watch `id` with an event of `type` on its path (nothing when unknown).
  void fire(WatchId id, EventType type);
  /// Every watch, now the caller's (the session went: each gets `session_lost`).
  std::vector<Watch> take_all();

 private:
  void count(const Watch& w, int delta);
  void erase(std::unordered_map<WatchId, Watch>::iterator it);

  std::unordered_map<WatchId, Watch> watches_;
  /// Per path, how many of `watches_` are data watches and how many children watches.
  std::unordered_map<std::string, std::array<int, 2>> per_path_;
  WatchId next_id_ = 1;
};

}  // namespace zkr::detail
