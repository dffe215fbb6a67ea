"""Conan 2 recipe for zkrecipes: Curator-style ZooKeeper lock recipes for C++20.

    conan create . --build=missing            # builds, packages, then runs test_package/
    conan create . -o zkrecipes/*:zookeeper_client=system-st

About the ZooKeeper C client flavour
------------------------------------
zkrecipes runs over either flavour of the ZooKeeper C client (docs/architecture.md, "Two C clients"):

* ``zookeeper_client=conan-mt`` (default): requires Conan Center's ``zookeeper-client-c``, the multi-threaded
  build of the client. That package does not export the ``THREADED`` define its header needs;
  cmake/ZkrConanZooKeeper.cmake adds it for our build and chooses the multi-threaded session.
* ``zookeeper_client=system-st``: links the system's single-threaded libzookeeper_st (Debian/Ubuntu:
  libzookeeper-st-dev), found by cmake/FindZooKeeper.cmake, driven from zkrecipes' own event loop.
"""
import os
import re

from conan import ConanFile
from conan.errors import ConanInvalidConfiguration
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy, load, rmdir

required_conan_version = ">=2.0"


class ZkrecipesConan(ConanFile):
    name = "zkrecipes"
    description = "Curator-style ZooKeeper lock recipes (mutex, read-write lock, semaphores) for C++20 and Asio"
    topics = ("zookeeper", "curator", "distributed-lock", "asio")
    package_type = "library"
    settings = "os", "arch", "compiler", "build_type"
    options = {
        "shared": [True, False],
        "fPIC": [True, False],
        "zookeeper_client": ["conan-mt", "system-st"],
    }
    default_options = {
        "shared": False,
        "fPIC": True,
        "zookeeper_client": "conan-mt",
    }
    exports_sources = (
        "CMakeLists.txt",
        "cmake/*",
        "framework/*",
        "drivers/*",
        "recipes/*",
        "test/testing/*",
        "LICENSE*",
    )

    def set_version(self):
        cmakelists = load(self, os.path.join(self.recipe_folder, "CMakeLists.txt"))
        match = re.search(r"project\(\s*zkrecipes\s+VERSION\s+([0-9][0-9.]*)", cmakelists)
        if not match:
            raise ConanInvalidConfiguration("cannot read the project VERSION from CMakeLists.txt")
        self.version = match.group(1)

    def config_options(self):
        if self.settings.os == "Windows":
            del self.options.fPIC

    def configure(self):
        if self.options.shared:
            self.options.rm_safe("fPIC")

    def layout(self):
        cmake_layout(self)

    def requirements(self):
        # Public headers use Boost.Asio and spdlog types.
        self.requires("boost/1.81.0", transitive_headers=True)
        self.requires("spdlog/1.10.0", transitive_headers=True)
        if self.options.zookeeper_client == "conan-mt":
            self.requires("zookeeper-client-c/3.8.1")

    def build_requirements(self):
        self.test_requires("catch2/2.13.10")

    def validate(self):
        check_min_cppstd(self, 20)
        if self.settings.os != "Linux":
            # zkrecipes::testing spawns ZooKeeper servers with fork/exec and PR_SET_PDEATHSIG.
            raise ConanInvalidConfiguration("zkrecipes supports Linux only")

    def generate(self):
        tc = CMakeToolchain(self)
        tc.cache_variables["ZKR_BUILD_TESTS"] = False
        tc.cache_variables["ZKR_BUILD_TOOLS"] = False
        tc.cache_variables["ZKR_BUILD_BENCH"] = False
        tc.cache_variables["ZKR_INSTALL"] = True
        if self.options.zookeeper_client == "conan-mt":
            snippet = os.path.join(self.source_folder, "cmake", "ZkrConanZooKeeper.cmake")
            tc.cache_variables["CMAKE_PROJECT_zkrecipes_INCLUDE"] = snippet.replace("\\", "/")
        tc.generate()
        CMakeDeps(self).generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        copy(self, "LICENSE*", src=self.source_folder, dst=os.path.join(self.package_folder, "licenses"))
        cmake = CMake(self)
        cmake.install()
        # Consumers get CMake files from CMakeDeps (built from package_info below), not from our config.
        rmdir(self, os.path.join(self.package_folder, "lib", "cmake"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "zkrecipes")
        self.cpp_info.set_property("cmake_target_name", "zkrecipes::zkrecipes")

        framework = self.cpp_info.components["framework"]
        framework.set_property("cmake_target_name", "zkrecipes::framework")
        framework.libs = ["zkrecipes_framework"]
        framework.requires = ["boost::headers", "spdlog::spdlog"]
        if self.options.zookeeper_client == "conan-mt":
            # The framework's private dependency; no public header includes <zookeeper.h>.
            framework.requires.append("zookeeper-client-c::zookeeper-client-c")
        else:
            framework.system_libs.append("zookeeper_st")
        framework.system_libs.append("pthread")

        drivers = self.cpp_info.components["drivers"]
        drivers.set_property("cmake_target_name", "zkrecipes::drivers")
        drivers.libs = ["zkrecipes_drivers"]
        drivers.requires = ["framework"]

        recipes = self.cpp_info.components["recipes"]
        recipes.set_property("cmake_target_name", "zkrecipes::recipes")
        recipes.libs = ["zkrecipes_recipes"]
        recipes.requires = ["drivers", "framework"]

        testing = self.cpp_info.components["testing"]
        testing.set_property("cmake_target_name", "zkrecipes::testing")
        testing.libs = ["zkrecipes_testing"]
        testing.system_libs = ["pthread"]
