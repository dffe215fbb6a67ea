# FindZooKeeper
# -------------
# Finds the ZooKeeper C client (single-threaded flavour, libzookeeper_st, which zkrecipes drives from
# its own Asio event loop). Defines the imported target ZooKeeper::zookeeper_st and ZooKeeper_FOUND.
#
# The upstream C client ships no CMake package configuration, hence this module.

find_path(ZooKeeper_INCLUDE_DIR NAMES zookeeper/zookeeper.h)
find_library(ZooKeeper_ST_LIBRARY NAMES zookeeper_st)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ZooKeeper
  REQUIRED_VARS ZooKeeper_ST_LIBRARY ZooKeeper_INCLUDE_DIR
  REASON_FAILURE_MESSAGE "install Debian's libzookeeper-st-dev (the C client, single-threaded flavour)")

if(ZooKeeper_FOUND AND NOT TARGET ZooKeeper::zookeeper_st)
  add_library(ZooKeeper::zookeeper_st UNKNOWN IMPORTED)
  set_target_properties(ZooKeeper::zookeeper_st PROPERTIES
    IMPORTED_LOCATION "${ZooKeeper_ST_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ZooKeeper_INCLUDE_DIR}")
endif()
mark_as_advanced(ZooKeeper_INCLUDE_DIR ZooKeeper_ST_LIBRARY)
