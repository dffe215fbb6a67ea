// The path of the zkr binary, compiled into this one file only (its definition comes from
// test/CMakeLists.txt): it differs between build directories, and on the cli tests' own objects would make
// them miss the compiler cache. Nothing else is included, so that this one uncached object compiles at once.

namespace zkr::test::cli {

const char* zkr_cli_path();  // declared for the tests in cli_support.hpp

const char* zkr_cli_path() {
#ifdef ZKR_CLI_PATH
  return ZKR_CLI_PATH;
#else
  return nullptr;
#endif
}

}  // namespace zkr::test::cli
