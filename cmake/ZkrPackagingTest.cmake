# cmake -P script behind the `packaging.consumer` test: installs a zkrecipes build tree into a scratch prefix,
# then configures, builds and runs the consumer in test_package/ against that prefix only.
#
# With ZKR_SHARED_SOURCE_DIR set (the `packaging.consumer_shared` test), it first builds the zkrecipes libraries
# from that source as shared libraries (unoptimized, no debug information, unity sources: only the packaging is
# under test)
# into ZKR_BUILD_DIR, and checks that each installed library resolves its dependencies by itself (ldd) and that
# the SONAMEs carry the version.
#
# Variables (-D): ZKR_BUILD_DIR, ZKR_CONSUMER_SOURCE_DIR, ZKR_WORK_DIR (wiped first), ZKR_CONFIG (build type of a
# multi-config build, may be empty), ZKR_GENERATOR, ZKR_CXX_COMPILER, ZKR_CXX_FLAGS (e.g. sanitizer flags, which
# a consumer of a sanitized build must use too), ZKR_ZOOKEEPER_CLIENT (the C client flavour, st or mt: the shared
# build's, and the one the consumer must find recorded in the installed package).
cmake_minimum_required(VERSION 3.20)

foreach(var ZKR_BUILD_DIR ZKR_CONSUMER_SOURCE_DIR ZKR_WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "ZkrPackagingTest.cmake: ${var} is not set")
  endif()
endforeach()

set(prefix "${ZKR_WORK_DIR}/prefix")
set(consumer_build "${ZKR_WORK_DIR}/build")
file(REMOVE_RECURSE "${ZKR_WORK_DIR}")
file(MAKE_DIRECTORY "${ZKR_WORK_DIR}")

function(zkr_run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "packaging.consumer: ${step} failed (${result}): ${ARGN}")
  endif()
endfunction()

set(generator_args "")
if(DEFINED ZKR_GENERATOR AND NOT ZKR_GENERATOR STREQUAL "")
  set(generator_args -G "${ZKR_GENERATOR}")
endif()
# The build's own CMAKE_PREFIX_PATH (the TLS-capable C client, say) reaches the consumer (and the shared
# build) through the environment, as a consumer's would: a list would not survive the command lines below.
if(DEFINED ZKR_EXTRA_PREFIX_PATH AND NOT ZKR_EXTRA_PREFIX_PATH STREQUAL "")
  string(REPLACE ";" ":" _extra "${ZKR_EXTRA_PREFIX_PATH}")
  if(DEFINED ENV{CMAKE_PREFIX_PATH} AND NOT "$ENV{CMAKE_PREFIX_PATH}" STREQUAL "")
    set(ENV{CMAKE_PREFIX_PATH} "${_extra}:$ENV{CMAKE_PREFIX_PATH}")
  else()
    set(ENV{CMAKE_PREFIX_PATH} "${_extra}")
  endif()
endif()
set(zookeeper_args "")
if(DEFINED ZKR_ZOOKEEPER_LIBRARY AND NOT ZKR_ZOOKEEPER_LIBRARY STREQUAL "")
  string(TOUPPER "${ZKR_ZOOKEEPER_CLIENT}" _flavour_up)
  set(zookeeper_args "-DZooKeeper_INCLUDE_DIR=${ZKR_ZOOKEEPER_INCLUDE_DIR}"
                     "-DZooKeeper_${_flavour_up}_LIBRARY=${ZKR_ZOOKEEPER_LIBRARY}")
endif()
set(compiler_args "")
if(DEFINED ZKR_CXX_COMPILER AND NOT ZKR_CXX_COMPILER STREQUAL "")
  set(compiler_args "-DCMAKE_CXX_COMPILER=${ZKR_CXX_COMPILER}")
endif()

if(DEFINED ZKR_SHARED_SOURCE_DIR AND NOT ZKR_SHARED_SOURCE_DIR STREQUAL "")
  message(STATUS "packaging.consumer: building ${ZKR_SHARED_SOURCE_DIR} as shared libraries in ${ZKR_BUILD_DIR}")
  zkr_run(shared-configure "${CMAKE_COMMAND}" -S "${ZKR_SHARED_SOURCE_DIR}" -B "${ZKR_BUILD_DIR}" ${generator_args}
    ${compiler_args} -DBUILD_SHARED_LIBS=ON -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0" -DCMAKE_UNITY_BUILD=ON
    -DZKR_BUILD_TESTS=OFF -DZKR_BUILD_TOOLS=OFF -DZKR_BUILD_BENCH=OFF "-DZKR_ZOOKEEPER_CLIENT=${ZKR_ZOOKEEPER_CLIENT}"
    "-DZKR_ZOOKEEPER_TLS=${ZKR_ZOOKEEPER_TLS}" ${zookeeper_args})
  zkr_run(shared-build "${CMAKE_COMMAND}" --build "${ZKR_BUILD_DIR}" --parallel 2)
  set(ZKR_CONFIG "")
endif()

set(config_args "")
set(build_type "${ZKR_CONFIG}")
if(build_type STREQUAL "")
  set(build_type RelWithDebInfo)
else()
  set(config_args --config "${ZKR_CONFIG}")
endif()

message(STATUS "packaging.consumer: installing ${ZKR_BUILD_DIR} into ${prefix}")
zkr_run(install "${CMAKE_COMMAND}" --install "${ZKR_BUILD_DIR}" --prefix "${prefix}" ${config_args})

if(DEFINED ZKR_SHARED_SOURCE_DIR AND NOT ZKR_SHARED_SOURCE_DIR STREQUAL "")
  set(build_type Debug)
  # Each library must find the libraries it needs by itself ($ORIGIN): the consumer's runtime path does not
  # reach them (DT_RUNPATH is not inherited), and ld.so does not search the prefix.
  file(GLOB libs "${prefix}/lib*/libzkrecipes_*.so")
  list(LENGTH libs n_libs)
  if(NOT n_libs EQUAL 4)
    message(FATAL_ERROR "packaging.consumer: expected 4 shared libraries in ${prefix}, found: ${libs}")
  endif()
  foreach(lib IN LISTS libs)
    if(NOT EXISTS "${lib}.${ZKR_VERSION_MAJOR_MINOR}")
      message(FATAL_ERROR "packaging.consumer: ${lib}.${ZKR_VERSION_MAJOR_MINOR} (the SONAME) is not installed")
    endif()
    execute_process(COMMAND ldd "${lib}" OUTPUT_VARIABLE ldd_out RESULT_VARIABLE ldd_result)
    if(NOT ldd_result EQUAL 0 OR ldd_out MATCHES "not found")
      message(FATAL_ERROR "packaging.consumer: ${lib} does not resolve its dependencies:\n${ldd_out}")
    endif()
  endforeach()
endif()

message(STATUS "packaging.consumer: configuring ${ZKR_CONSUMER_SOURCE_DIR}")
zkr_run(configure "${CMAKE_COMMAND}" -S "${ZKR_CONSUMER_SOURCE_DIR}" -B "${consumer_build}" ${generator_args}
  ${compiler_args}
  "-DCMAKE_BUILD_TYPE=${build_type}"
  "-DCMAKE_PREFIX_PATH=${prefix}"
  ${zookeeper_args}
  "-DCMAKE_CXX_FLAGS=${ZKR_CXX_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${ZKR_CXX_FLAGS}"
  "-DZKR_EXPECT_ZOOKEEPER_CLIENT=${ZKR_ZOOKEEPER_CLIENT}"
  "-DZKR_EXPECT_ZOOKEEPER_TLS=${ZKR_ZOOKEEPER_TLS}")

message(STATUS "packaging.consumer: building")
zkr_run(build "${CMAKE_COMMAND}" --build "${consumer_build}" ${config_args})

set(exe "${consumer_build}/test_package")
if(NOT EXISTS "${exe}" AND EXISTS "${consumer_build}/${ZKR_CONFIG}/test_package")
  set(exe "${consumer_build}/${ZKR_CONFIG}/test_package")
endif()
message(STATUS "packaging.consumer: running ${exe}")
zkr_run(run "${exe}")
message(STATUS "packaging.consumer: OK")
