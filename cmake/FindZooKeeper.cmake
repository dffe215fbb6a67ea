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
#
# TLS: the C client speaks TLS only when it was built with OpenSSL (Debian's packages are not; see
# docs/tls.md). For each flavour found, ZooKeeper_<flavour>_TLS is TRUE when its library links a call of
# zookeeper_init_ssl; its target then carries HAVE_OPENSSL_H (the header declares the call only under it)
# and links OpenSSL::SSL and OpenSSL::Crypto (which a static archive of the client does not carry).

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

find_path(ZooKeeper_SASL_INCLUDE_DIR sasl/sasl.h)
find_library(ZooKeeper_SASL_LIBRARY NAMES sasl2)
mark_as_advanced(ZooKeeper_SASL_INCLUDE_DIR ZooKeeper_SASL_LIBRARY)

# Whether a flavour's library is TLS-capable: link a call of zookeeper_init_ssl against it (and OpenSSL, for a
# static archive). The answer is cached per library path.
function(_zookeeper_check_tls flavour library)
  string(TOUPPER "${flavour}" _up)
  set(_cache_var "ZooKeeper_${_up}_TLS_CHECKED_${library}")
  string(MAKE_C_IDENTIFIER "${_cache_var}" _cache_var)
  set(ZooKeeper_${flavour}_TLS FALSE PARENT_SCOPE)
  find_package(OpenSSL QUIET)
  if(NOT OpenSSL_FOUND)
    return()
  endif()
  if(NOT DEFINED ${_cache_var})
    set(_defs -DHAVE_OPENSSL_H)
    set(_libs "${library}" OpenSSL::SSL OpenSSL::Crypto m)
    # A static archive built with SASL too (tools/build-zookeeper-tls.sh's) needs libsasl2 to link.
    if(library MATCHES "\\.a$" AND ZooKeeper_SASL_LIBRARY)
      list(APPEND _libs "${ZooKeeper_SASL_LIBRARY}")
    endif()
    if(flavour STREQUAL "mt")
      list(APPEND _defs -DTHREADED)
      list(APPEND _libs Threads::Threads)
    endif()
    # In whichever language the project has (a consumer of zkrecipes may have only C++).
    get_property(_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    if("CXX" IN_LIST _languages)
      set(_ext cpp)
    elseif("C" IN_LIST _languages)
      set(_ext c)
    else()
      return()
    endif()
    set(_src "${CMAKE_BINARY_DIR}${CMAKE_FILES_DIRECTORY}/zookeeper_tls_check_${flavour}.${_ext}")
    file(WRITE "${_src}" "#include <zookeeper/zookeeper.h>\nint main(void) {\n  zhandle_t *zh = zookeeper_init_ssl(\"127.0.0.1:1\", \"a,b,c\", 0, 1000, 0, 0, 0);\n  return zh != 0;\n}\n")
    try_compile(_ok "${CMAKE_BINARY_DIR}${CMAKE_FILES_DIRECTORY}/zookeeper_tls_check_${flavour}"
      SOURCES "${_src}"
      COMPILE_DEFINITIONS ${_defs}
      CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${ZooKeeper_INCLUDE_DIR}"
      LINK_LIBRARIES ${_libs})
    set(${_cache_var} ${_ok} CACHE INTERNAL "whether ${library} is a TLS-capable ZooKeeper C client")
  endif()
  if(${_cache_var})
    set(ZooKeeper_${flavour}_TLS TRUE PARENT_SCOPE)
    set_property(TARGET ZooKeeper::zookeeper_${flavour} APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS HAVE_OPENSSL_H)
    set_property(TARGET ZooKeeper::zookeeper_${flavour} APPEND PROPERTY INTERFACE_LINK_LIBRARIES
      OpenSSL::SSL OpenSSL::Crypto)
    if(library MATCHES "\\.a$")
      set_property(TARGET ZooKeeper::zookeeper_${flavour} APPEND PROPERTY INTERFACE_LINK_LIBRARIES m)
    endif()
  endif()
endfunction()
if(ZooKeeper_st_FOUND AND NOT DEFINED ZooKeeper_st_TLS)
  _zookeeper_check_tls(st "${ZooKeeper_ST_LIBRARY}")
endif()
if(ZooKeeper_mt_FOUND AND NOT DEFINED ZooKeeper_mt_TLS)
  if(NOT TARGET Threads::Threads)
    find_package(Threads QUIET)
  endif()
  _zookeeper_check_tls(mt "${ZooKeeper_MT_LIBRARY}")
endif()
# SASL: the C client authenticates with SASL only when it was built with Cyrus SASL (WITH_CYRUS_SASL; Debian's
# packages are not, tools/build-zookeeper-tls.sh's is). ZooKeeper_<flavour>_SASL is TRUE when its library links
# a call of zookeeper_init_sasl; its target then carries HAVE_CYRUS_SASL_H (the header declares the call only
# under it) and links libsasl2.
function(_zookeeper_check_sasl flavour library)
  string(TOUPPER "${flavour}" _up)
  set(_cache_var "ZooKeeper_${_up}_SASL_CHECKED_${library}")
  string(MAKE_C_IDENTIFIER "${_cache_var}" _cache_var)
  set(ZooKeeper_${flavour}_SASL FALSE PARENT_SCOPE)
  if(NOT ZooKeeper_SASL_INCLUDE_DIR OR NOT ZooKeeper_SASL_LIBRARY)
    return()
  endif()
  if(NOT DEFINED ${_cache_var})
    set(_defs -DHAVE_CYRUS_SASL_H)
    set(_libs "${library}" "${ZooKeeper_SASL_LIBRARY}" m)
    if(ZooKeeper_${flavour}_TLS)
      list(APPEND _defs -DHAVE_OPENSSL_H)
      list(APPEND _libs OpenSSL::SSL OpenSSL::Crypto)
    endif()
    if(flavour STREQUAL "mt")
      list(APPEND _defs -DTHREADED)
      list(APPEND _libs Threads::Threads)
    endif()
    get_property(_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    if("CXX" IN_LIST _languages)
      set(_ext cpp)
    elseif("C" IN_LIST _languages)
      set(_ext c)
    else()
      return()
    endif()
    set(_src "${CMAKE_BINARY_DIR}${CMAKE_FILES_DIRECTORY}/zookeeper_sasl_check_${flavour}.${_ext}")
    file(WRITE "${_src}" "#include <zookeeper/zookeeper.h>\nint main(void) {\n  zhandle_t *zh = zookeeper_init_sasl(\"127.0.0.1:1\", 0, 1000, 0, 0, 0, 0, 0);\n  return zh != 0;\n}\n")
    try_compile(_ok "${CMAKE_BINARY_DIR}${CMAKE_FILES_DIRECTORY}/zookeeper_sasl_check_${flavour}"
      SOURCES "${_src}"
      COMPILE_DEFINITIONS ${_defs}
      CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${ZooKeeper_INCLUDE_DIR};${ZooKeeper_SASL_INCLUDE_DIR}"
      LINK_LIBRARIES ${_libs})
    set(${_cache_var} ${_ok} CACHE INTERNAL "whether ${library} is a SASL-capable ZooKeeper C client")
  endif()
  if(${_cache_var})
    set(ZooKeeper_${flavour}_SASL TRUE PARENT_SCOPE)
    set_property(TARGET ZooKeeper::zookeeper_${flavour} APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS
      HAVE_CYRUS_SASL_H)
    set_property(TARGET ZooKeeper::zookeeper_${flavour} APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES
      "${ZooKeeper_SASL_INCLUDE_DIR}")
    set_property(TARGET ZooKeeper::zookeeper_${flavour} APPEND PROPERTY INTERFACE_LINK_LIBRARIES
      "${ZooKeeper_SASL_LIBRARY}")
  endif()
endfunction()
if(ZooKeeper_st_FOUND AND NOT DEFINED ZooKeeper_st_SASL)
  _zookeeper_check_sasl(st "${ZooKeeper_ST_LIBRARY}")
endif()
if(ZooKeeper_mt_FOUND AND NOT DEFINED ZooKeeper_mt_SASL)
  _zookeeper_check_sasl(mt "${ZooKeeper_MT_LIBRARY}")
endif()
mark_as_advanced(ZooKeeper_INCLUDE_DIR ZooKeeper_ST_LIBRARY ZooKeeper_MT_LIBRARY)
