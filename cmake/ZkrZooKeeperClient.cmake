# Chooses the ZooKeeper C client flavour the framework is built on (ZKR_ZOOKEEPER_CLIENT: st, mt or auto) and
# sets ZKR_ZOOKEEPER_FLAVOUR to st or mt; the framework then links ZooKeeper::zookeeper_${ZKR_ZOOKEEPER_FLAVOUR}
# and compiles that flavour's session (framework/src/st_session.cpp or mt_session.cpp). `auto` takes the
# single-threaded client where it is installed (the faster one here: docs/architecture.md), else the
# multi-threaded one. A Conan build has mapped Conan Center's package onto ZooKeeper::zookeeper_mt before
# this runs (cmake/ZkrConanZooKeeper.cmake).
if(NOT ZKR_ZOOKEEPER_CLIENT MATCHES "^(auto|st|mt)$")
  message(FATAL_ERROR "ZKR_ZOOKEEPER_CLIENT is '${ZKR_ZOOKEEPER_CLIENT}': use st, mt or auto")
endif()

if(ZKR_ZOOKEEPER_CLIENT STREQUAL "auto")
  find_package(ZooKeeper REQUIRED)
  if(TARGET ZooKeeper::zookeeper_st)
    set(ZKR_ZOOKEEPER_FLAVOUR st)
  else()
    set(ZKR_ZOOKEEPER_FLAVOUR mt)
  endif()
else()
  find_package(ZooKeeper REQUIRED COMPONENTS ${ZKR_ZOOKEEPER_CLIENT})
  set(ZKR_ZOOKEEPER_FLAVOUR ${ZKR_ZOOKEEPER_CLIENT})
endif()
if(NOT TARGET ZooKeeper::zookeeper_${ZKR_ZOOKEEPER_FLAVOUR})
  message(FATAL_ERROR "zkrecipes: no ZooKeeper::zookeeper_${ZKR_ZOOKEEPER_FLAVOUR} target after finding ZooKeeper")
endif()
message(STATUS "zkrecipes: ZooKeeper C client flavour: ${ZKR_ZOOKEEPER_FLAVOUR}")
