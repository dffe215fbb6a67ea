#include <cstdlib>
#include <string_view>
#include <zkr/testing/java.hpp>
#include <zkr/testing/server_options.hpp>

#include "run_tool.hpp"

namespace zkr::testing {
namespace {

namespace fs = std::filesystem;
using detail::is_executable_file;

// `<dir>/<name>.jar`, else the first `<dir>/<name>-<digit>...jar` in name order.
std::optional<fs::path> find_jar(const fs::path& dir, std::string_view name) {
  const fs::path plain = dir / (std::string(name) + ".jar");
  std::error_code ec;
  if (fs::is_regular_file(plain, ec)) return plain;
  std::optional<fs::path> best;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (file.size() > name.size() + 5 && file.compare(0, name.size(), name) == 0 &&
        file[name.size()] == '-' && file[name.size() + 1] >= '0' && file[name.size() + 1] <= '9' &&
        file.ends_with(".jar") && (!best || it->path() < *best)) {
      best = it->path();
    }
  }
  return best;
}

}  // namespace

fs::path find_java(const std::optional<fs::path>& explicit_path) {
  constexpr std::string_view hint = "install default-jre-headless (apt-get install default-jre-headless)";
  if (explicit_path) {
    if (is_executable_file(*explicit_path)) return *explicit_path;
    throw TestingError("Java not found: " + explicit_path->string() +
                       " (ServerOptions::java) is not an executable file; " + std::string(hint));
  }
  std::string looked;
  if (const char* home = std::getenv("JAVA_HOME"); home && *home) {
    const fs::path candidate = fs::path(home) / "bin" / "java";
    if (is_executable_file(candidate)) return candidate;
    looked = candidate.string() + " ($JAVA_HOME), ";
  }
  if (auto on_path = detail::find_on_path("java")) return *on_path;
  throw TestingError("Java not found: no java in " + looked + "$PATH; " + std::string(hint) +
                     " or set ServerOptions::java");
}

fs::path zookeeper_lib_dir() {
  if (const char* dir = std::getenv("ZKR_ZOOKEEPER_LIB_DIR"); dir && *dir) return dir;
  return "/usr/share/java";
}

std::string zookeeper_classpath(const std::vector<fs::path>& extra_jars) {
  const fs::path dir = zookeeper_lib_dir();
  std::string classpath;
  auto add = [&](const fs::path& jar) {
    if (!classpath.empty()) classpath += ':';
    classpath += jar.string();
  };
  std::string missing;
  for (std::string_view name : {"zookeeper", "zookeeper-jute", "slf4j-api"}) {
    if (auto jar = find_jar(dir, name)) {
      add(*jar);
    } else {
      missing += (missing.empty() ? "" : ", ") + std::string(name) + ".jar";
    }
  }
  if (!missing.empty()) {
    throw TestingError("ZooKeeper server jars not found in " + dir.string() + " (missing " + missing +
                       "): install Debian's zookeeper package (apt-get install zookeeper), or point "
                       "ZKR_ZOOKEEPER_LIB_DIR at a ZooKeeper 3.8 lib/ directory");
  }
  if (auto binding = find_jar(dir, "slf4j-simple")) {
    add(*binding);
  } else if (auto nop = find_jar(dir, "slf4j-nop")) {
    add(*nop);
  }
  for (std::string_view name :
       {"netty-handler", "netty-common", "netty-buffer", "netty-transport", "netty-codec", "netty-resolver",
        "netty-transport-native-epoll", "netty-transport-native-unix-common", "metrics-core", "commons-io",
        "commons-cli", "snappy-java"}) {
    if (auto jar = find_jar(dir, name)) add(*jar);
  }
  for (const auto& jar : extra_jars) add(jar);
  return classpath;
}

}  // namespace zkr::testing
