# Install rules and the CMake package (find_package(zkrecipes CONFIG)), {fmt}-style:
#   targets zkrecipes::framework, ::drivers, ::recipes, ::testing and the umbrella zkrecipes::zkrecipes,
#   headers under ${CMAKE_INSTALL_INCLUDEDIR}/zkr/..., config + version file (SameMinorVersion while the
#   version is 0.x, whose minor versions may break the API) and our FindZooKeeper.cmake under
#   ${CMAKE_INSTALL_LIBDIR}/cmake/zkrecipes. Shared builds (BUILD_SHARED_LIBS=ON) install versioned libraries
#   that find each other through $ORIGIN (zkr_set_library_properties).
#
# ZooKeeper::zookeeper_<flavour> is a PRIVATE dependency of zkr_framework, but a static zkr_framework still
# carries it as $<LINK_ONLY:...> in the exported link interface (and a shared one records it for the runtime
# search path), so zkrecipesConfig.cmake always finds that flavour through the installed Find module before it
# loads the targets. No public header includes <zookeeper.h>, so consumers never need its include directory.
include(CMakePackageConfigHelpers)

set(ZKR_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/zkrecipes"
    CACHE STRING "Where zkrecipesConfig.cmake is installed, relative to the prefix")

install(TARGETS zkr_framework zkr_drivers zkr_recipes zkrecipes zkr_testing
  EXPORT zkrecipesTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT zkrecipes_development
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT zkrecipes_runtime
          NAMELINK_COMPONENT zkrecipes_development
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT zkrecipes_runtime
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

foreach(_zkr_include_dir framework/include drivers/include recipes/include test/testing/include)
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/${_zkr_include_dir}/"
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    COMPONENT zkrecipes_development
    FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h" PATTERN "*.ipp")
endforeach()

install(EXPORT zkrecipesTargets
  NAMESPACE zkrecipes::
  DESTINATION ${ZKR_INSTALL_CMAKEDIR}
  COMPONENT zkrecipes_development)

configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/zkrecipesConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/zkrecipesConfig.cmake"
  INSTALL_DESTINATION ${ZKR_INSTALL_CMAKEDIR})
# Before 1.0 a minor version may break the API: find_package(zkrecipes 0.1) must not accept 0.2.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_zkr_compatibility SameMinorVersion)
else()
  set(_zkr_compatibility SameMajorVersion)
endif()
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/zkrecipesConfigVersion.cmake"
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY ${_zkr_compatibility})
install(FILES
    "${PROJECT_BINARY_DIR}/zkrecipesConfig.cmake"
    "${PROJECT_BINARY_DIR}/zkrecipesConfigVersion.cmake"
    "${PROJECT_SOURCE_DIR}/cmake/FindZooKeeper.cmake"
  DESTINATION ${ZKR_INSTALL_CMAKEDIR}
  COMPONENT zkrecipes_development)
