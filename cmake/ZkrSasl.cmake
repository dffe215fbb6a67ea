# Cyrus SASL for the native transport's SASL, and the C client's where it has it (docs/sasl.md). ZKR_SASL: auto (on when the native transport is
# built and libsasl2 with its headers is found), ON (required: an error without it) or OFF. Sets
# ZKR_SASL_ENABLED, ZKR_SASL_LIBRARY and ZKR_SASL_INCLUDE_DIR. The library is linked by its path, so that the
# installed package needs no target of its own for it.
set(ZKR_SASL_ENABLED OFF)
if(NOT ZKR_SASL MATCHES "^(auto|AUTO|ON|on|OFF|off)$")
  message(FATAL_ERROR "ZKR_SASL is '${ZKR_SASL}': use auto, ON or OFF")
endif()
set(_zkr_sasl_native OFF)
if(ZKR_ZOOKEEPER_FLAVOUR STREQUAL "native" OR ZKR_NATIVE_TRANSPORT)
  set(_zkr_sasl_native ON)
endif()
if(NOT ZKR_SASL MATCHES "^(OFF|off)$" AND _zkr_sasl_native)
  find_path(ZKR_SASL_INCLUDE_DIR sasl/sasl.h)
  find_library(ZKR_SASL_LIBRARY NAMES sasl2)
  if(ZKR_SASL_INCLUDE_DIR AND ZKR_SASL_LIBRARY)
    set(ZKR_SASL_ENABLED ON)
  elseif(ZKR_SASL MATCHES "^(ON|on)$")
    message(FATAL_ERROR "ZKR_SASL=ON: Cyrus SASL (sasl/sasl.h, libsasl2) not found (Debian: libsasl2-dev)")
  endif()
endif()
message(STATUS "zkrecipes: SASL (native transport, Cyrus SASL): ${ZKR_SASL_ENABLED}")
# GSSAPI (Kerberos) on the native transport: MIT krb5's GSS-API with gss_acquire_cred_from (krb5 1.11+;
# Debian: libkrb5-dev), for per-client credentials. Without it, GSSAPI is refused at start(). Sets
# ZKR_SASL_GSSAPI_ENABLED and ZKR_GSSAPI_LIBRARIES (linked by path, as libsasl2 is).
set(ZKR_SASL_GSSAPI_ENABLED OFF)
if(ZKR_SASL_ENABLED)
  find_path(ZKR_GSSAPI_INCLUDE_DIR gssapi/gssapi_ext.h)
  find_library(ZKR_GSSAPI_LIBRARY NAMES gssapi_krb5)
  find_library(ZKR_KRB5_LIBRARY NAMES krb5)
  mark_as_advanced(ZKR_GSSAPI_INCLUDE_DIR ZKR_GSSAPI_LIBRARY ZKR_KRB5_LIBRARY)
  if(ZKR_GSSAPI_INCLUDE_DIR AND ZKR_GSSAPI_LIBRARY AND ZKR_KRB5_LIBRARY)
    include(CheckSymbolExists)
    set(CMAKE_REQUIRED_INCLUDES "${ZKR_GSSAPI_INCLUDE_DIR}")
    set(CMAKE_REQUIRED_LIBRARIES "${ZKR_GSSAPI_LIBRARY}" "${ZKR_KRB5_LIBRARY}")
    set(CMAKE_REQUIRED_QUIET ON)
    check_symbol_exists(gss_acquire_cred_from "gssapi/gssapi.h;gssapi/gssapi_ext.h" ZKR_HAVE_GSS_ACQUIRE_CRED_FROM)
    unset(CMAKE_REQUIRED_INCLUDES)
    unset(CMAKE_REQUIRED_LIBRARIES)
    unset(CMAKE_REQUIRED_QUIET)
    if(ZKR_HAVE_GSS_ACQUIRE_CRED_FROM)
      set(ZKR_SASL_GSSAPI_ENABLED ON)
      set(ZKR_GSSAPI_LIBRARIES "${ZKR_GSSAPI_LIBRARY}" "${ZKR_KRB5_LIBRARY}")
    endif()
  endif()
endif()
message(STATUS "zkrecipes: SASL GSSAPI (native transport, MIT krb5): ${ZKR_SASL_GSSAPI_ENABLED}")
# The C client's SASL: ZKR_C_CLIENT_SASL_ENABLED where the linked client exports zookeeper_init_sasl
# (ZooKeeper_<flavour>_SASL, from FindZooKeeper.cmake: tools/build-zookeeper-tls.sh's build, not Debian's), on
# either flavour. (The C client enters AUTH_FAILED after a refused exchange without a session event: the st
# session's pump and the mt session's attempt watch notice it.)
set(ZKR_C_CLIENT_SASL_ENABLED OFF)
if(NOT ZKR_SASL MATCHES "^(OFF|off)$" AND ZKR_ZOOKEEPER_FLAVOUR MATCHES "^(st|mt)$"
   AND ZooKeeper_${ZKR_ZOOKEEPER_FLAVOUR}_SASL)
  set(ZKR_C_CLIENT_SASL_ENABLED ON)
endif()
if(ZKR_SASL MATCHES "^(ON|on)$" AND NOT ZKR_SASL_ENABLED AND NOT ZKR_C_CLIENT_SASL_ENABLED)
  message(FATAL_ERROR "ZKR_SASL=ON: neither the native transport (ZKR_NATIVE_TRANSPORT) nor the C client found "
    "(build one with tools/build-zookeeper-tls.sh) has SASL")
endif()
message(STATUS "zkrecipes: SASL over the C client: ${ZKR_C_CLIENT_SASL_ENABLED}")
unset(_zkr_sasl_native)
