# Injected by conanfile.py (CMAKE_PROJECT_zkrecipes_INCLUDE) when zookeeper_client=conan-mt, the default: maps
# Conan Center's zookeeper-client-c package onto the ZooKeeper::zookeeper_mt target and chooses the
# multi-threaded flavour, before cmake/ZkrZooKeeperClient.cmake runs. Not used by plain CMake builds.
#
# Conan Center's zookeeper-client-c is the multi-threaded build of the C client (upstream compiles it with
# -DTHREADED) and does not export that define, although zookeeper.h declares the synchronous API only under
# #ifdef THREADED and hides zookeeper_interest/zookeeper_process under it. We add THREADED ourselves, as
# FindZooKeeper.cmake does for a system libzookeeper_mt.
find_package(zookeeper-client-c CONFIG REQUIRED)
if(NOT TARGET ZooKeeper::zookeeper_mt)
  add_library(ZooKeeper::zookeeper_mt INTERFACE IMPORTED)
  target_link_libraries(ZooKeeper::zookeeper_mt INTERFACE zookeeper-client-c::zookeeper-client-c)
  target_compile_definitions(ZooKeeper::zookeeper_mt INTERFACE THREADED)
endif()
set(ZKR_ZOOKEEPER_CLIENT mt CACHE STRING "Provided by Conan" FORCE)
# FindZooKeeper.cmake keeps an existing ZooKeeper::zookeeper_mt; these only satisfy its checks (find_path and
# find_library do not search when the cache variable is already set).
set(ZooKeeper_MT_LIBRARY "zookeeper-client-c::zookeeper-client-c" CACHE STRING "Provided by Conan" FORCE)
set(ZooKeeper_INCLUDE_DIR "zookeeper-client-c::zookeeper-client-c" CACHE STRING "Provided by Conan" FORCE)
