"""Conan 2 recipe for zkrecipes: Curator-style ZooKeeper lock recipes for C++20.

    conan create . --build=missing            # builds, packages, then runs test_package/
    conan create . -o zkrecipes/*:zookeeper_client=system-st
    conan create . -o zkrecipes/*:tls=True     # TLS to the ensemble (docs/tls.md, "Conan")
    conan create . -o zkrecipes/*:sasl=True    # SASL (DIGEST-MD5) to the ensemble (docs/sasl.md, "Conan")

About the ZooKeeper C client flavour
------------------------------------
zkrecipes runs over either flavour of the ZooKeeper C client (docs/architecture.md, "Two C clients"):

* ``zookeeper_client=conan-mt`` (default): requires Conan Center's ``zookeeper-client-c``, the multi-threaded
  build of the client. That package does not export the ``THREADED`` define its header needs;
  cmake/ZkrConanZooKeeper.cmake adds it for our build and chooses the multi-threaded session.
* ``zookeeper_client=system-st``: links the system's single-threaded libzookeeper_st (Debian/Ubuntu:
  libzookeeper-st-dev), found by cmake/FindZooKeeper.cmake, driven from zkrecipes' own event loop.
* ``zookeeper_client=native``: no ZooKeeper C client at all: the native transport on Boost.Asio
  (docs/native-transport.md; ``ZKR_ZOOKEEPER_CLIENT=native``). With ``tls=True`` it speaks TLS over
  Conan Center's ``openssl``.

Either C-client choice carries the native transport too (``ZKR_NATIVE_TRANSPORT``), chosen per client with
``ClientConfig::transport`` or the environment variable ``ZKR_ZOOKEEPER_TRANSPORT``.

About TLS
---------
``tls=True`` builds zkrecipes with the C client's TLS support (``ZKR_ZOOKEEPER_TLS=ON``: configuring fails
rather than building without it), so that ``ClientConfig::tls`` works and ``zkr::tls_supported()`` is true.
With ``tls=False`` (default) the build is the plain one (``ZKR_ZOOKEEPER_TLS=OFF``), whatever client is found.

* With ``native``, it requires ``openssl``: the native transport speaks TLS itself (docs/tls.md), and the
  framework component links ``openssl::ssl`` and ``openssl::crypto``.
* With ``conan-mt``, it builds Conan Center's ``zookeeper-client-c`` with ``with_openssl=True`` (validate()
  refuses a graph where that option is False) and requires ``openssl`` itself: zkrecipes checks certificates
  and keys with OpenSSL (framework/src/tls/), and the framework component links ``openssl::ssl`` and
  ``openssl::crypto``. That package does not export ``HAVE_OPENSSL_H``, under which zookeeper.h declares
  ``zookeeper_init_ssl``; cmake/ZkrConanZooKeeper.cmake adds it.
* With ``system-st``, the system's libzookeeper_st must itself be built with OpenSSL, and the system's
  libssl-dev is used. **Debian's and Ubuntu's packages are not built with it**, and a recipe cannot look at a
  system library before the build: ``conan create`` then fails when CMake configures, with a message that
  points at tools/build-zookeeper-tls.sh (docs/tls.md). Consumers link ``zookeeper_st``, ``ssl`` and
  ``crypto`` by name, so that client must be the one the compiler, linker and loader find first.
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
        "zookeeper_client": ["conan-mt", "system-st", "native"],
        "tls": [True, False],
        "sasl": [True, False],
    }
    default_options = {
        "shared": False,
        "fPIC": True,
        "zookeeper_client": "conan-mt",
        "tls": False,
        "sasl": False,
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
        if self.options.tls and self.options.zookeeper_client == "conan-mt":
            self.options["zookeeper-client-c"].with_openssl = True
        if self.options.zookeeper_client == "conan-mt":
            # SASL on the C client is the client's own (zookeeper_init_sasl); without it, its refusal.
            self.options["zookeeper-client-c"].with_cyrus_sasl = bool(self.options.sasl)

    def layout(self):
        cmake_layout(self)

    def requirements(self):
        # Public headers use Boost.Asio and spdlog types.
        self.requires("boost/1.81.0", transitive_headers=True)
        self.requires("spdlog/1.10.0", transitive_headers=True)
        if self.options.zookeeper_client == "conan-mt":
            self.requires("zookeeper-client-c/3.8.1")
            if self.options.tls:
                # The framework calls OpenSSL itself (framework/src/tls/), and its component names
                # openssl::ssl and openssl::crypto, which needs a direct requirement. The same range as
                # zookeeper-client-c's, so that both resolve to one openssl.
                self.requires("openssl/[>=1.1 <4]")
        elif self.options.zookeeper_client == "native" and self.options.tls:
            # The native transport's TLS (framework/src/native/tls_stream.cpp) is OpenSSL through Asio.
            self.requires("openssl/[>=1.1 <4]")
        if self.options.sasl:
            # Cyrus SASL: the native transport calls it itself (framework/src/native/sasl_exchange.cpp), the C
            # client's callbacks are Cyrus's (framework/src/sasl/cyrus_callbacks.cpp). The C client's own
            # requirement (with_cyrus_sasl) resolves to the same recipe.
            self.requires("cyrus-sasl/[>=2.1.27 <3]")

    def build_requirements(self):
        self.test_requires("catch2/2.13.10")

    def validate(self):
        check_min_cppstd(self, 20)
        if self.settings.os != "Linux":
            # zkrecipes::testing spawns ZooKeeper servers with fork/exec and PR_SET_PDEATHSIG.
            raise ConanInvalidConfiguration("zkrecipes supports Linux only")
        if self.options.tls and self.options.zookeeper_client == "conan-mt":
            # configure() asks for it, but a profile or the command line can still say otherwise.
            if not self.dependencies["zookeeper-client-c"].options.with_openssl:
                raise ConanInvalidConfiguration(
                    "zkrecipes/*:tls=True needs zookeeper-client-c/*:with_openssl=True")
        if self.options.sasl and self.options.zookeeper_client == "conan-mt":
            if not self.dependencies["zookeeper-client-c"].options.with_cyrus_sasl:
                raise ConanInvalidConfiguration(
                    "zkrecipes/*:sasl=True needs zookeeper-client-c/*:with_cyrus_sasl=True")
        # With system-st, whether the system's libzookeeper_st speaks TLS cannot be known here; CMake checks it
        # (ZKR_ZOOKEEPER_TLS=ON) and fails at configure time when it does not (Debian's does not).

    def generate(self):
        tc = CMakeToolchain(self)
        tc.cache_variables["ZKR_BUILD_TESTS"] = False
        tc.cache_variables["ZKR_BUILD_TOOLS"] = False
        tc.cache_variables["ZKR_BUILD_BENCH"] = False
        tc.cache_variables["ZKR_INSTALL"] = True
        # The option decides, not what CMake happens to find: package_info() must know what the build links.
        tc.cache_variables["ZKR_ZOOKEEPER_TLS"] = "ON" if self.options.tls else "OFF"
        # ON fails at configure time when neither transport gets SASL (cmake/ZkrSasl.cmake).
        tc.cache_variables["ZKR_SASL"] = "ON" if self.options.sasl else "OFF"
        if self.options.zookeeper_client == "native":
            tc.cache_variables["ZKR_ZOOKEEPER_CLIENT"] = "native"
        if self.options.zookeeper_client == "conan-mt":
            snippet = os.path.join(self.source_folder, "cmake", "ZkrConanZooKeeper.cmake")
            tc.cache_variables["CMAKE_PROJECT_zkrecipes_INCLUDE"] = snippet.replace("\\", "/")
            # Read by that snippet: whether Conan's C client was built with OpenSSL.
            with_openssl = bool(self.dependencies["zookeeper-client-c"].options.with_openssl)
            tc.cache_variables["ZKR_CONAN_ZOOKEEPER_TLS"] = "ON" if with_openssl else "OFF"
            with_sasl = bool(self.dependencies["zookeeper-client-c"].options.with_cyrus_sasl)
            tc.cache_variables["ZKR_CONAN_ZOOKEEPER_SASL"] = "ON" if with_sasl else "OFF"
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
            if self.options.tls:
                framework.requires.extend(["openssl::ssl", "openssl::crypto"])
        elif self.options.zookeeper_client == "native":
            if self.options.tls:
                framework.requires.extend(["openssl::ssl", "openssl::crypto"])
        elif self.options.zookeeper_client == "system-st":
            framework.system_libs.append("zookeeper_st")
            if self.options.tls:
                # The system's OpenSSL, which the system's TLS-capable libzookeeper_st was built against.
                framework.system_libs.extend(["ssl", "crypto"])
        if self.options.sasl:
            framework.requires.append("cyrus-sasl::cyrus-sasl")
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
