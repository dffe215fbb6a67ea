#pragma once
// The watch registry (a part of the client, see client.hpp): the watches the reads set (one-shot) and
// addWatch sets (persistent), keyed by an id that travels with the request to the session. A one-shot watch
// is fired once by the session's watch event, a persistent one by each; both are forgotten on request or when
// the request that set them failed. A watch is *set* once the server answered the request carrying it; when
// the session goes, the set ones are taken (each gets session_lost), while one whose request is still in
// flight stays: the retry loop sends that request again in the next session, where the server sets it under
// the same id. An answer from a session already gone (delivered as it closed) leaves a dead watch, failed
// then (`generation`, `take_one`). I/O thread only.

#include <array>
#include <cstdint>
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
    bool set = false;  // the server answered the request that carries it
  };

  /// Registers `cb` for a read of `path` (none: returns 0).
  WatchId add(WatchCallback cb, std::string path, zk::WatchKind kind);
  /// The server answered the request carrying `id` and holds the watch in this session.
  void mark_set(WatchId id);
  /// Counts the sessions gone (each take): a request sent under an earlier count was answered by a session
  /// that is over, so the watch it set is dead (`take_one`).
  std::uint64_t generation() const noexcept { return generation_; }
  /// Watch `id`, now the caller's (its session went: it gets `session_lost`), if registered.
  std::optional<Watch> take_one(WatchId id);
  /// Forgets `id`; returns its path and kind when it was registered (the server still holds it).
  std::optional<std::pair<std::string, zk::WatchKind>> forget(WatchId id);
  /// Whether another watch of ours that a removal of `kind` on `path` would take from the server remains
  /// (set, or being set by a request in flight): a removal sent then must stay local. The server keeps one
  /// watch per path, kind and session. A 3.8 server also keeps a persistent watch in its data and child
  /// tables (a data or children removal takes it too) and removes it only by the type `any` (which takes
  /// every watch of ours on the path).
  bool watching(const std::string& path, zk::WatchKind kind) const;
  /// Forgets every watch on `path`.
  void forget_path(const std::string& path);
  /// Runs watch `id` with an event of `type` (nothing when unknown), and forgets it when it is a one-shot
  /// one. The event's path: a one-shot watch's own; `path` (un-namespaced) for a persistent one, whose
  /// events may be about a descendant.
  void fire(WatchId id, EventType type, const std::string& path);
  /// Every watch, now the caller's (the client ended: each gets `session_lost`).
  std::vector<Watch> take_all();
  /// The watches the server set, now the caller's (the session went: each gets `session_lost`); those whose
  /// request is in flight stay, for its retry in the next session to set.
  std::vector<Watch> take_set();

 private:
  void count(const Watch& w, int delta);
  void erase(std::unordered_map<WatchId, Watch>::iterator it);

  std::unordered_map<WatchId, Watch> watches_;
  /// Per path, how many of `watches_` are data watches, children, persistent and persistent recursive ones.
  std::unordered_map<std::string, std::array<int, 4>> per_path_;
  WatchId next_id_ = 1;
  std::uint64_t generation_ = 0;
};

}  // namespace zkr::detail
