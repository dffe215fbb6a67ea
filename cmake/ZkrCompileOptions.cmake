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

# Properties of every installed zkrecipes library. A 0.x release may change the ABI in any minor version, so the
# SONAME carries major.minor (libzkrecipes_framework.so.0.1). Installed shared libraries find each other through
# $ORIGIN: DT_RUNPATH is not inherited, so a consumer's own runtime path never reaches a library that
# libzkrecipes_recipes.so needs. (Static libraries ignore these properties.)
function(zkr_set_library_properties target)
  set_target_properties(${target} PROPERTIES
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
    INSTALL_RPATH "$ORIGIN")
endfunction()

if(ZKR_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
