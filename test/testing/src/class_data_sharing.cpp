// Class data sharing for the servers' JVMs (see class_data_sharing.hpp).

#include "class_data_sharing.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <system_error>

namespace zkr::testing::detail {
namespace fs = std::filesystem;

ClassDataSharing::ClassDataSharing(const fs::path& java, const std::string& classpath) {
  std::error_code ec;
  const fs::path dir = fs::temp_directory_path(ec) / ("zkr-testing-cds-" + std::to_string(::getuid()));
  char key[17];
  std::snprintf(key, sizeof key, "%016zx", std::hash<std::string>{}(java.string() + '\n' + classpath));
  archive_ = dir / (std::string("zookeeper-") + key + ".jsa");
}

std::vector<std::string> ClassDataSharing::flags() {
  std::error_code ec;
  if (dump_) fs::remove(*dump_, ec);  // the last server was killed: its dump, if any, is not whole
  dump_.reset();
  if (fs::is_regular_file(archive_, ec) && fs::file_size(archive_, ec) > 0 && !ec)
    return {"-Xshare:auto", "-XX:SharedArchiveFile=" + archive_.string()};
  fs::create_directories(archive_.parent_path(), ec);
  if (ec) return {};
  static std::atomic<int> n{0};
  dump_ = fs::path(archive_.string() + "." + std::to_string(::getpid()) + "-" + std::to_string(++n) + ".tmp");
  return {"-XX:ArchiveClassesAtExit=" + dump_->string()};
}

void ClassDataSharing::exited_cleanly() {
  if (!dump_) return;
  std::error_code ec;
  if (fs::is_regular_file(*dump_, ec) && fs::file_size(*dump_, ec) > 0 && !ec && !fs::exists(archive_, ec))
    fs::rename(*dump_, archive_, ec);
  fs::remove(*dump_, ec);
  dump_.reset();
}

}  // namespace zkr::testing::detail
