"""Conan 2 test_package for zkrecipes: builds test_package/main.cpp against the package and runs it.

It passes the tested package's ``tls`` option as ZKR_EXPECT_ZOOKEEPER_TLS, so main.cpp checks that the library
linked speaks TLS exactly when the option says so (``zkr::tls_supported()``).
"""
import os

from conan import ConanFile
from conan.tools.build import can_run
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout


class ZkrecipesTestPackageConan(ConanFile):
    settings = "os", "arch", "compiler", "build_type"
    test_type = "explicit"

    def requirements(self):
        self.requires(self.tested_reference_str)

    def layout(self):
        cmake_layout(self)

    def generate(self):
        tc = CMakeToolchain(self)
        tls = bool(self.dependencies["zkrecipes"].options.tls)
        tc.cache_variables["ZKR_EXPECT_ZOOKEEPER_TLS"] = "ON" if tls else "OFF"
        sasl = bool(self.dependencies["zkrecipes"].options.sasl)
        tc.cache_variables["ZKR_EXPECT_SASL"] = "ON" if sasl else "OFF"
        tc.generate()
        CMakeDeps(self).generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def test(self):
        if can_run(self):
            self.run(os.path.join(self.cpp.build.bindir, "test_package"), env="conanrun")
