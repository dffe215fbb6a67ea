# Injected by conanfile.py (CMAKE_PROJECT_zkrecipes_INCLUDE) when zookeeper_client=conan-mt: maps Conan
# Center's zookeeper-client-c package onto the ZooKeeper::zookeeper_st target the build links, before
# FindZooKeeper.cmake runs. Not used by plain CMake builds.
#
# Conan Center's zookeeper-client-c is the *multi-threaded* build of the C client (upstream compiles it with
# -DTHREADED, WANT_SYNCAPI=ON) and does not export that define, although zookeeper.h declares the synchronous
# API only under #ifdef THREADED. We therefore add THREADED ourselves, and only for that package.
find_package(zookeeper-client-c CONFIG REQUIRED)
if(NOT TARGET ZooKeeper::zookeeper_st)
  add_library(ZooKeeper::zookeeper_st INTERFACE IMPORTED)
  target_link_libraries(ZooKeeper::zookeeper_st INTERFACE zookeeper-client-c::zookeeper-client-c)
  target_compile_definitions(ZooKeeper::zookeeper_st INTERFACE THREADED)
endif()
# FindZooKeeper.cmake keeps an existing ZooKeeper::zookeeper_st; these only satisfy its REQUIRED_VARS check
# (find_path/find_library do not search when the cache variable is already set).
set(ZooKeeper_ST_LIBRARY "zookeeper-client-c::zookeeper-client-c" CACHE STRING "Provided by Conan" FORCE)
set(ZooKeeper_INCLUDE_DIR "zookeeper-client-c::zookeeper-client-c" CACHE STRING "Provided by Conan" FORCE)
