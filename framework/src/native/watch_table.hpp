#pragma once
// The watches the server holds for this session, as the native transport records them. One-shot ones are
// registered when a read's reply says the server set one (exists: a data watch on a node, an exist watch on a
// missing one; getData: data; getChildren: child) and fired (and forgotten) by the notifications that trigger
// them on the server. Persistent ones (addWatch) stay until removed: a persistent watch hears every event of
// its path, a recursive one the created, deleted and data-changed events of its path and of every descendant
// (never children-changed, which a 3.8 server may send for a path under a recursive watch because of another
// watch there). All are listed for SetWatches(2) when a new connection resumes the session. Paths are the
// seam's (without the connect string's chroot).

#include <map>
#include <string>
#include <vector>
#include <zkr/framework/types.hpp>

#include "../session.hpp"
#include "records.hpp"

namespace zkr::detail::native {

class WatchTable {
 public:
  enum class Kind { data, exist, child, persistent, persistent_recursive };
  void add(Kind kind, const std::string& path, WatchId id);
  /// The watches a notification of `type` on `path` fires; the one-shot ones are removed from the table.
  std::vector<WatchId> fire(EventType type, const std::string& path);
  struct Removal {
    bool found = false;        // the watch (or, for id 0, any watch of the kind) was there
    bool others_left = false;  // watches of the kind remain on the path (the server's must stay)
  };
  /// Removes watch `id` (0: all) of `kind` on `path`.
  Removal remove(const std::string& path, zk::WatchKind kind, WatchId id);
  /// The watched paths, under `chroot`, for SetWatches.
  void list(std::string_view chroot, SetWatches& out) const;
  bool empty() const noexcept;
  void clear() noexcept;

 private:
  static constexpr int kKinds = 5;
  using Table = std::map<std::string, std::vector<WatchId>, std::less<>>;
  Table& table(Kind k) { return tables_[static_cast<int>(k)]; }
  Table tables_[kKinds];
};

}  // namespace zkr::detail::native
