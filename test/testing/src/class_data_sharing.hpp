#pragma once
// Class data sharing for the servers' JVMs (AppCDS, JDK 13+): the first server a machine stops dumps the
// classes it loaded into an archive, and every later server maps them instead of loading and verifying them
// again, which takes about a third of the CPU a server spends starting (0.45 of 1.2 s, measured with
// Debian 12's OpenJDK 17 and ZooKeeper 3.8). A missing, stale or foreign archive only costs that time: the
// JVM then starts without it (-Xshare:auto).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace zkr::testing::detail {

class ClassDataSharing {
 public:
  /// For servers run by `java` on `classpath`: the archive under the system temporary directory, one per
  /// user, JVM and class path.
  ClassDataSharing(const std::filesystem::path& java, const std::string& classpath);
  /// The JVM flags for one server: map the archive, or (none yet) dump one at exit into a file of its own.
  std::vector<std::string> flags();
  /// The server whose flags came last exited by itself (not killed): its dump, if it made one, becomes the
  /// archive (an atomic rename; a concurrent winner is kept).
  void exited_cleanly();
  /// Whether the server whose flags came last is to dump the archive (it must then exit by itself).
  bool dumping() const noexcept { return dump_.has_value(); }

 private:
  std::filesystem::path archive_;
  std::optional<std::filesystem::path> dump_;
};

}  // namespace zkr::testing::detail
