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

# Whether a C client library links a program calling `call` (a C expression yielding a zhandle_t *), compiled
# with `DEFINES` and linked with the library and `LIBS`, plus Threads for the mt flavour. The answer is cached per
# feature and library path; the check uses whichever language the project has (a consumer of zkrecipes may have
# only C++). Sets `out` to TRUE or FALSE.
function(_zookeeper_links out feature flavour library call)
  cmake_parse_arguments(PARSE_ARGV 5 _arg "" "" "DEFINES;LIBS;INCLUDES")
  string(TOUPPER "${flavour}_${feature}" _up)
  string(MAKE_C_IDENTIFIER "ZooKeeper_${_up}_CHECKED_${library}" _cache_var)
  if(NOT DEFINED ${_cache_var})
    set(_defs ${_arg_DEFINES})
    set(_libs "${library}" ${_arg_LIBS} m)
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
      set(${out} FALSE PARENT_SCOPE)
      return()
    endif()
    set(_dir "${CMAKE_BINARY_DIR}${CMAKE_FILES_DIRECTORY}/zookeeper_${feature}_check_${flavour}")
    file(WRITE "${_dir}.${_ext}"
      "#include <zookeeper/zookeeper.h>\nint main(void) {\n  zhandle_t *zh = ${call};\n  return zh != 0;\n}\n")
    try_compile(_ok "${_dir}"
      SOURCES "${_dir}.${_ext}"
      COMPILE_DEFINITIONS ${_defs}
      CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${ZooKeeper_INCLUDE_DIR};${_arg_INCLUDES}"
      LINK_LIBRARIES ${_libs})
    set(${_cache_var} ${_ok} CACHE INTERNAL "whether ${library} links ${feature}")
  endif()
  if(${_cache_var})
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# TLS: ZooKeeper_<flavour>_TLS is TRUE when the library links a call of zookeeper_init_ssl (with OpenSSL); its
# target then carries HAVE_OPENSSL_H and links OpenSSL.
function(_zookeeper_check_tls flavour library)
  set(ZooKeeper_${flavour}_TLS FALSE PARENT_SCOPE)
  find_package(OpenSSL QUIET)
  if(NOT OpenSSL_FOUND)
    return()
  endif()
  set(_libs OpenSSL::SSL OpenSSL::Crypto)
  # A static archive built with SASL too (tools/build-zookeeper-tls.sh's) needs libsasl2 to link.
  if(library MATCHES "\\.a$" AND ZooKeeper_SASL_LIBRARY)
    list(APPEND _libs "${ZooKeeper_SASL_LIBRARY}")
  endif()
  _zookeeper_links(_ok tls ${flavour} "${library}"
    "zookeeper_init_ssl(\"127.0.0.1:1\", \"a,b,c\", 0, 1000, 0, 0, 0)"
    DEFINES -DHAVE_OPENSSL_H LIBS ${_libs})
  if(_ok)
    set(ZooKeeper_${flavour}_TLS TRUE PARENT_SCOPE)
    set_property(TARGET ZooKeeper::zookeeper_${flavour} APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS HAVE_OPENSSL_H)
    set_property(TARGET ZooKeeper::zookeeper_${flavour} APPEND PROPERTY INTERFACE_LINK_LIBRARIES
      OpenSSL::SSL OpenSSL::Crypto)
    if(library MATCHES "\\.a$")
      set_property(TARGET ZooKeeper::zookeeper_${flavour} APPEND PROPERTY INTERFACE_LINK_LIBRARIES m)
    endif()
  endif()
endfunction()

# SASL: the C client authenticates with SASL only when it was built with Cyrus SASL (WITH_CYRUS_SASL; Debian's
# packages are not, tools/build-zookeeper-tls.sh's is). ZooKeeper_<flavour>_SASL is TRUE when its library links
# a call of zookeeper_init_sasl; its target then carries HAVE_CYRUS_SASL_H (the header declares the call only
# under it) and links libsasl2.
function(_zookeeper_check_sasl flavour library)
  set(ZooKeeper_${flavour}_SASL FALSE PARENT_SCOPE)
  if(NOT ZooKeeper_SASL_INCLUDE_DIR OR NOT ZooKeeper_SASL_LIBRARY)
    return()
  endif()
  set(_defs -DHAVE_CYRUS_SASL_H)
  set(_libs "${ZooKeeper_SASL_LIBRARY}")
  if(ZooKeeper_${flavour}_TLS)
    list(APPEND _defs -DHAVE_OPENSSL_H)
    list(APPEND _libs OpenSSL::SSL OpenSSL::Crypto)
  endif()
  _zookeeper_links(_ok sasl ${flavour} "${library}" "zookeeper_init_sasl(\"127.0.0.1:1\", 0, 1000, 0, 0, 0, 0, 0)"
    DEFINES ${_defs} LIBS ${_libs} INCLUDES "${ZooKeeper_SASL_INCLUDE_DIR}")
  if(_ok)
    set(ZooKeeper_${flavour}_SASL TRUE PARENT_SCOPE)
    set_property(TARGET ZooKeeper::zookeeper_${flavour} APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS
      HAVE_CYRUS_SASL_H)
    set_property(TARGET ZooKeeper::zookeeper_${flavour} APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES
      "${ZooKeeper_SASL_INCLUDE_DIR}")
    set_property(TARGET ZooKeeper::zookeeper_${flavour} APPEND PROPERTY INTERFACE_LINK_LIBRARIES
      "${ZooKeeper_SASL_LIBRARY}")
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
if(ZooKeeper_st_FOUND AND NOT DEFINED ZooKeeper_st_SASL)
  _zookeeper_check_sasl(st "${ZooKeeper_ST_LIBRARY}")
endif()
if(ZooKeeper_mt_FOUND AND NOT DEFINED ZooKeeper_mt_SASL)
  _zookeeper_check_sasl(mt "${ZooKeeper_MT_LIBRARY}")
endif()
mark_as_advanced(ZooKeeper_INCLUDE_DIR ZooKeeper_ST_LIBRARY ZooKeeper_MT_LIBRARY)
