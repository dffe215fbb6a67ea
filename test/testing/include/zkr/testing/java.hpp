#pragma once
/// \file
/// Locating Java and the ZooKeeper server jars, for `TestingServer` and for interop tests that run Java
/// programs (ZooKeeper's CLI, Curator) against a test server.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace zkr::testing {

/// The `java` executable: `explicit_path` if given, else `$JAVA_HOME/bin/java`, else `java` on `PATH`.
/// \throws TestingError "Java not found: install default-jre-headless ..." when it does not exist or is not
///         executable.
std::filesystem::path find_java(const std::optional<std::filesystem::path>& explicit_path = std::nullopt);

/// The directory holding the ZooKeeper server jars: `$ZKR_ZOOKEEPER_LIB_DIR` if set, else `/usr/share/java`.
std::filesystem::path zookeeper_lib_dir();

/// The class path (colon separated) that runs a ZooKeeper 3.8 server or `org.apache.zookeeper.ZooKeeperMain`:
/// zookeeper, zookeeper-jute, slf4j-api (required), an slf4j binding (slf4j-simple, else slf4j-nop), netty,
/// metrics-core, commons-io, commons-cli and snappy-java (when present), then `extra_jars`. A jar is found as
/// `<name>.jar` or `<name>-<version>...jar` in `zookeeper_lib_dir()`.
/// \throws TestingError "ZooKeeper server jars not found ...: install Debian's zookeeper package" when a
///         required jar is missing.
std::string zookeeper_classpath(const std::vector<std::filesystem::path>& extra_jars = {});

}  // namespace zkr::testing
