# Warning and sanitizer flags shared by every zkrecipes target.
function(zkr_set_compile_options target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
  # GCC 12 reports -Wmismatched-new-delete on Asio's coroutine frames, whichever way inlining falls: the frame
  # comes from Asio's recycling allocator (aligned_alloc) and goes back through the frame's own operator
  # delete, which frees it with the matching call. A false positive of GCC's, not of the code.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-mismatched-new-delete)
  endif()
  if(ZKR_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# How test and tool programs are compiled (not the libraries, which keep the build type's flags): as unity
# sources of up to 8 files each (CMAKE's UNITY_BUILD; a file with a source property of its own is compiled
# alone), and, in an optimized build, with -O1 and line tables only (-g1). Most of a test file's compile time
# is instantiating and emitting the same Asio and Catch2 templates: a unity source emits them once for its
# files (about 2.5 times less time per file, measured on the integration tests), and full debug information
# at -O2 costs another third. A test's stack trace still names files and lines.
# (Not the benchmark driver: it keeps the build type's flags, and its scenarios each define their own `run`.)
function(zkr_set_program_build target)
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  # In a unity source every file but the first is an included one, where GCC takes a class with a member of
  # an anonymous-namespace type for a header's mistake (-Wsubobject-linkage): here it is not one.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
  endif()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" OR CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(${target} PRIVATE "$<$<CONFIG:RelWithDebInfo,Release,MinSizeRel>:-O1;-g1>")
  endif()
endfunction()

# Properties of every installed zkrecipes library. A 0.x release may change the ABI in any minor version, so the
# SONAME carries major.minor (libzkrecipes_framework.so.0.1). Installed shared libraries find each other through
# $ORIGIN: DT_RUNPATH is not inherited, so a consumer's own runtime path never reaches a library that
# libzkrecipes_recipes.so needs. (Static libraries ignore these properties.)
function(zkr_set_library_properties target)
  set_target_properties(${target} PROPERTIES
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
    INSTALL_RPATH "$ORIGIN")
  # ZKR_UNITY_LIBRARIES: up to 8 sources per compile (about half the CPU time from scratch, measured on the
  # sanitizer build); off by default, so that a developer's build checks each source on its own.
  if(ZKR_UNITY_LIBRARIES)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
endfunction()

if(ZKR_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
