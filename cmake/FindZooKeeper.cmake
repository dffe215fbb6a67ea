# FindZooKeeper
# -------------
# Finds the ZooKeeper C client, in either of its flavours (components `st` and `mt`; without COMPONENTS, at
# least one of them):
#
#   ZooKeeper::zookeeper_st  the single-threaded client (libzookeeper_st), which zkrecipes drives from its own
#                            Asio event loop (Debian: libzookeeper-st-dev)
#   ZooKeeper::zookeeper_mt  the multi-threaded client (libzookeeper_mt), with its own I/O and completion
#                            threads; carries the THREADED definition its header needs (Debian:
#                            libzookeeper-mt-dev, or the runtime package libzookeeper-mt2 beside
#                            libzookeeper-st-dev: both flavours share one zookeeper.h)
#
# Sets ZooKeeper_FOUND, ZooKeeper_st_FOUND and ZooKeeper_mt_FOUND. ZooKeeper_ROOT or CMAKE_PREFIX_PATH point it
# at another installation. The upstream C client ships no CMake package configuration, hence this module.

find_path(ZooKeeper_INCLUDE_DIR NAMES zookeeper/zookeeper.h)
find_library(ZooKeeper_ST_LIBRARY NAMES zookeeper_st)
# The runtime package alone has only the versioned file (no libzookeeper_mt.so link): accept it by name.
find_library(ZooKeeper_MT_LIBRARY NAMES zookeeper_mt libzookeeper_mt.so.2)

set(ZooKeeper_st_FOUND FALSE)
set(ZooKeeper_mt_FOUND FALSE)
if(ZooKeeper_INCLUDE_DIR AND ZooKeeper_ST_LIBRARY)
  set(ZooKeeper_st_FOUND TRUE)
endif()
if(ZooKeeper_INCLUDE_DIR AND ZooKeeper_MT_LIBRARY)
  set(ZooKeeper_mt_FOUND TRUE)
endif()

if(NOT ZooKeeper_FIND_COMPONENTS AND NOT ZooKeeper_st_FOUND AND NOT ZooKeeper_mt_FOUND)
  set(_zookeeper_any "")  # neither flavour: fail with the message below
else()
  set(_zookeeper_any TRUE)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ZooKeeper
  REQUIRED_VARS ZooKeeper_INCLUDE_DIR _zookeeper_any
  HANDLE_COMPONENTS
  REASON_FAILURE_MESSAGE
    "install the ZooKeeper C client: Debian's libzookeeper-st-dev (single-threaded), or libzookeeper-mt-dev (multi-threaded)")
unset(_zookeeper_any)

if(ZooKeeper_st_FOUND AND NOT TARGET ZooKeeper::zookeeper_st)
  add_library(ZooKeeper::zookeeper_st UNKNOWN IMPORTED)
  set_target_properties(ZooKeeper::zookeeper_st PROPERTIES
    IMPORTED_LOCATION "${ZooKeeper_ST_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ZooKeeper_INCLUDE_DIR}")
endif()
if(ZooKeeper_mt_FOUND AND NOT TARGET ZooKeeper::zookeeper_mt)
  add_library(ZooKeeper::zookeeper_mt UNKNOWN IMPORTED)
  set_target_properties(ZooKeeper::zookeeper_mt PROPERTIES
    IMPORTED_LOCATION "${ZooKeeper_MT_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ZooKeeper_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS THREADED
    INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()
mark_as_advanced(ZooKeeper_INCLUDE_DIR ZooKeeper_ST_LIBRARY ZooKeeper_MT_LIBRARY)
