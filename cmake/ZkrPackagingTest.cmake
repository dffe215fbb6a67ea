# cmake -P script behind the `packaging.consumer` test: installs a zkrecipes build tree into a scratch prefix,
# then configures, builds and runs the consumer in test_package/ against that prefix only.
#
# Variables (-D): ZKR_BUILD_DIR, ZKR_CONSUMER_SOURCE_DIR, ZKR_WORK_DIR (wiped first), ZKR_CONFIG (build type of a
# multi-config build, may be empty), ZKR_GENERATOR, ZKR_CXX_COMPILER, ZKR_CXX_FLAGS (e.g. sanitizer flags, which
# a consumer of a sanitized build must use too).
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

set(config_args "")
set(build_type "${ZKR_CONFIG}")
if(build_type STREQUAL "")
  set(build_type RelWithDebInfo)
else()
  set(config_args --config "${ZKR_CONFIG}")
endif()

message(STATUS "packaging.consumer: installing ${ZKR_BUILD_DIR} into ${prefix}")
zkr_run(install "${CMAKE_COMMAND}" --install "${ZKR_BUILD_DIR}" --prefix "${prefix}" ${config_args})

set(generator_args "")
if(DEFINED ZKR_GENERATOR AND NOT ZKR_GENERATOR STREQUAL "")
  set(generator_args -G "${ZKR_GENERATOR}")
endif()
set(compiler_args "")
if(DEFINED ZKR_CXX_COMPILER AND NOT ZKR_CXX_COMPILER STREQUAL "")
  set(compiler_args "-DCMAKE_CXX_COMPILER=${ZKR_CXX_COMPILER}")
endif()

message(STATUS "packaging.consumer: configuring ${ZKR_CONSUMER_SOURCE_DIR}")
zkr_run(configure "${CMAKE_COMMAND}" -S "${ZKR_CONSUMER_SOURCE_DIR}" -B "${consumer_build}" ${generator_args}
  ${compiler_args}
  "-DCMAKE_BUILD_TYPE=${build_type}"
  "-DCMAKE_PREFIX_PATH=${prefix}"
  "-DCMAKE_CXX_FLAGS=${ZKR_CXX_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${ZKR_CXX_FLAGS}")

message(STATUS "packaging.consumer: building")
zkr_run(build "${CMAKE_COMMAND}" --build "${consumer_build}" ${config_args})

set(exe "${consumer_build}/test_package")
if(NOT EXISTS "${exe}" AND EXISTS "${consumer_build}/${ZKR_CONFIG}/test_package")
  set(exe "${consumer_build}/${ZKR_CONFIG}/test_package")
endif()
message(STATUS "packaging.consumer: running ${exe}")
zkr_run(run "${exe}")
message(STATUS "packaging.consumer: OK")
