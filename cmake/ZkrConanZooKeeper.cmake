# Injected by conanfile.py (CMAKE_PROJECT_zkrecipes_INCLUDE) when zookeeper_client=conan-mt, the default: maps
# Conan Center's zookeeper-client-c package onto the ZooKeeper::zookeeper_mt target and chooses the
# multi-threaded flavour, before cmake/ZkrZooKeeperClient.cmake runs. Not used by plain CMake builds.
#
# Conan Center's zookeeper-client-c is the multi-threaded build of the C client (upstream compiles it with
# -DTHREADED) and does not export that define, although zookeeper.h declares the synchronous API only under
# #ifdef THREADED and hides zookeeper_interest/zookeeper_process under it. We add THREADED ourselves, as
# FindZooKeeper.cmake does for a system libzookeeper_mt.
#
# TLS: ZKR_CONAN_ZOOKEEPER_TLS (set by conanfile.py) says whether that package was built with_openssl. It
# becomes ZooKeeper_mt_TLS, which FindZooKeeper.cmake would otherwise work out with a test link (it cannot
# here: the library is a Conan target, not a file). With it, the target gets what FindZooKeeper.cmake gives a
# TLS-capable client: HAVE_OPENSSL_H, under which zookeeper.h declares zookeeper_init_ssl (the package does
# not export it either), and OpenSSL::SSL / OpenSSL::Crypto, from Conan's openssl package through CMakeDeps.
find_package(zookeeper-client-c CONFIG REQUIRED)
if(ZKR_CONAN_ZOOKEEPER_TLS)
  find_package(OpenSSL REQUIRED)
  set(ZooKeeper_mt_TLS TRUE)
else()
  set(ZooKeeper_mt_TLS FALSE)
endif()
# Whether Conan's C client was built with Cyrus SASL (zookeeper-client-c/*:with_cyrus_sasl, ZKR_CONAN_ZOOKEEPER_SASL
# from conanfile.py): read by ZkrSasl.cmake as FindZooKeeper.cmake's check would be.
if(ZKR_CONAN_ZOOKEEPER_SASL)
  set(ZooKeeper_mt_SASL TRUE)
else()
  set(ZooKeeper_mt_SASL FALSE)
endif()
if(NOT TARGET ZooKeeper::zookeeper_mt)
  add_library(ZooKeeper::zookeeper_mt INTERFACE IMPORTED)
  target_link_libraries(ZooKeeper::zookeeper_mt INTERFACE zookeeper-client-c::zookeeper-client-c)
  target_compile_definitions(ZooKeeper::zookeeper_mt INTERFACE THREADED)
  if(ZooKeeper_mt_TLS)
    target_compile_definitions(ZooKeeper::zookeeper_mt INTERFACE HAVE_OPENSSL_H)
    target_link_libraries(ZooKeeper::zookeeper_mt INTERFACE OpenSSL::SSL OpenSSL::Crypto)
  endif()
  if(ZooKeeper_mt_SASL)  # the header declares zookeeper_init_sasl only under it
    target_compile_definitions(ZooKeeper::zookeeper_mt INTERFACE HAVE_CYRUS_SASL_H)
  endif()
endif()
set(ZKR_ZOOKEEPER_CLIENT mt CACHE STRING "Provided by Conan" FORCE)
# FindZooKeeper.cmake keeps an existing ZooKeeper::zookeeper_mt; these only satisfy its checks (find_path and
# find_library do not search when the cache variable is already set).
set(ZooKeeper_MT_LIBRARY "zookeeper-client-c::zookeeper-client-c" CACHE STRING "Provided by Conan" FORCE)
set(ZooKeeper_INCLUDE_DIR "zookeeper-client-c::zookeeper-client-c" CACHE STRING "Provided by Conan" FORCE)
