# Documentation targets (not part of `all`):
#   docs          the API reference from the doc comments (Doxygen), warnings are errors
#   docs-diagram  docs/architecture.svg from docs/architecture.dot (Graphviz)
find_package(Doxygen)
if(DOXYGEN_FOUND)
  set(DOXYGEN_PROJECT_NAME "zkrecipes")
  set(DOXYGEN_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/docs/api")
  set(DOXYGEN_EXTRACT_ALL NO)
  set(DOXYGEN_WARN_IF_UNDOCUMENTED NO)
  set(DOXYGEN_WARN_AS_ERROR YES)
  set(DOXYGEN_EXCLUDE_PATTERNS "*/detail/*")
  set(DOXYGEN_EXCLUDE_SYMBOLS "zkr::detail" "zkr::detail::*")
  set(DOXYGEN_GENERATE_LATEX NO)
  set(DOXYGEN_QUIET YES)
  doxygen_add_docs(docs
    ${PROJECT_SOURCE_DIR}/framework/include
    ${PROJECT_SOURCE_DIR}/drivers/include
    ${PROJECT_SOURCE_DIR}/recipes/include
    ${PROJECT_SOURCE_DIR}/test/testing/include
    COMMENT "API reference (Doxygen) into ${PROJECT_BINARY_DIR}/docs/api")
endif()
find_program(ZKR_DOT dot)
if(ZKR_DOT)
  add_custom_target(docs-diagram
    COMMAND ${ZKR_DOT} -Tsvg ${PROJECT_SOURCE_DIR}/docs/architecture.dot -o ${PROJECT_SOURCE_DIR}/docs/architecture.svg
    COMMENT "Rendering docs/architecture.svg")
endif()
if(DOXYGEN_FOUND AND ZKR_BUILD_TESTS)
  # The API reference builds without a warning (WARN_AS_ERROR).
  add_test(NAME docs.api COMMAND ${CMAKE_COMMAND} --build ${PROJECT_BINARY_DIR} --target docs)
  set_tests_properties(docs.api PROPERTIES LABELS docs TIMEOUT 300)
endif()
