# Chooses the ZooKeeper C client flavour the framework is built on (ZKR_ZOOKEEPER_CLIENT: st, mt or auto) and
# sets ZKR_ZOOKEEPER_FLAVOUR to st or mt; the framework then links ZooKeeper::zookeeper_${ZKR_ZOOKEEPER_FLAVOUR}
# and compiles that flavour's session (framework/src/st_session.cpp or mt_session.cpp). `auto` takes the
# single-threaded client where it is installed (the faster one here: docs/architecture.md), else the
# multi-threaded one. A Conan build has mapped Conan Center's package onto ZooKeeper::zookeeper_mt before
# this runs (cmake/ZkrConanZooKeeper.cmake).
#
# TLS (ZKR_ZOOKEEPER_TLS: auto, ON or OFF) sets ZKR_ZOOKEEPER_TLS_ENABLED: whether the framework is built with
# the client's TLS support (docs/tls.md). `auto` takes it when the chosen flavour's library is TLS-capable
# (ZooKeeper_<flavour>_TLS, from FindZooKeeper.cmake); ON fails here when it is not. Without it, a client
# configured for TLS fails at start() with client_errc::tls_unsupported: it never falls back to plain text.
#
# `native` (issue 38) links no C client: the framework speaks the protocol itself (framework/src/native/).
#
# The native transport's TLS (framework/src/native/tls_stream.cpp) needs OpenSSL only: ZKR_NATIVE_TLS_ENABLED
# is set where the build carries the native transport (ZKR_ZOOKEEPER_CLIENT=native, or ZKR_NATIVE_TRANSPORT)
# and OpenSSL is found, unless ZKR_ZOOKEEPER_TLS is OFF; a native-only build with ZKR_ZOOKEEPER_TLS=ON
# requires OpenSSL.
macro(zkr_native_tls)
  set(ZKR_NATIVE_TLS_ENABLED OFF)
  if((ZKR_ZOOKEEPER_CLIENT STREQUAL "native" OR ZKR_NATIVE_TRANSPORT) AND NOT ZKR_ZOOKEEPER_TLS STREQUAL "OFF")
    find_package(OpenSSL QUIET)
    if(OpenSSL_FOUND)
      set(ZKR_NATIVE_TLS_ENABLED ON)
    elseif(ZKR_ZOOKEEPER_CLIENT STREQUAL "native" AND ZKR_ZOOKEEPER_TLS STREQUAL "ON")
      message(FATAL_ERROR "ZKR_ZOOKEEPER_TLS=ON: the native transport's TLS needs OpenSSL (libssl-dev)")
    endif()
  endif()
  message(STATUS "zkrecipes: TLS over the native transport: ${ZKR_NATIVE_TLS_ENABLED}")
endmacro()
if(NOT ZKR_ZOOKEEPER_CLIENT MATCHES "^(auto|st|mt|native)$")
  message(FATAL_ERROR "ZKR_ZOOKEEPER_CLIENT is '${ZKR_ZOOKEEPER_CLIENT}': use st, mt, native or auto")
endif()

if(ZKR_ZOOKEEPER_CLIENT STREQUAL "native")
  set(ZKR_ZOOKEEPER_FLAVOUR native)
  set(ZKR_ZOOKEEPER_TLS_ENABLED OFF)  # the C client's
  message(STATUS "zkrecipes: ZooKeeper transport: native (no C client linked)")
  zkr_native_tls()
  return()
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

if(NOT ZKR_ZOOKEEPER_TLS MATCHES "^(auto|ON|OFF)$")
  message(FATAL_ERROR "ZKR_ZOOKEEPER_TLS is '${ZKR_ZOOKEEPER_TLS}': use auto, ON or OFF")
endif()
set(ZKR_ZOOKEEPER_TLS_ENABLED OFF)
if(ZKR_ZOOKEEPER_TLS STREQUAL "ON" AND NOT ZooKeeper_${ZKR_ZOOKEEPER_FLAVOUR}_TLS)
  message(FATAL_ERROR
    "ZKR_ZOOKEEPER_TLS=ON, but the ZooKeeper C client found (ZooKeeper::zookeeper_${ZKR_ZOOKEEPER_FLAVOUR}) "
    "has no TLS support, or OpenSSL (libssl-dev) is missing. Debian's packages are built without it: build "
    "one with tools/build-zookeeper-tls.sh and point CMAKE_PREFIX_PATH at its prefix (docs/tls.md).")
endif()
if(NOT ZKR_ZOOKEEPER_TLS STREQUAL "OFF" AND ZooKeeper_${ZKR_ZOOKEEPER_FLAVOUR}_TLS)
  set(ZKR_ZOOKEEPER_TLS_ENABLED ON)
endif()
message(STATUS "zkrecipes: TLS to the ensemble over the C client: ${ZKR_ZOOKEEPER_TLS_ENABLED}")
zkr_native_tls()
