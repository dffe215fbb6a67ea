#include "scratch_dir.hpp"

#include <stdlib.h>  // mkdtemp

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <zkr/testing/server_options.hpp>

namespace zkr::testing::detail {
namespace fs = std::filesystem;

ScratchDir::ScratchDir(const std::optional<fs::path>& given, std::string_view kind) {
  if (given) {
    std::error_code ec;
    fs::create_directories(*given, ec);
    if (ec || !fs::is_directory(*given)) {
      throw TestingError("cannot create the data directory " + given->string() + ": " +
                         (ec ? ec.message() : std::string("not a directory")));
    }
    path_ = fs::absolute(*given);
    return;
  }
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string templ = (base / ("zkr-" + std::string(kind) + "-XXXXXX")).string();
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    throw TestingError("cannot create a temporary directory like " + templ + ": " + std::strerror(errno));
  }
  path_ = buf.data();
  owned_ = true;
}

ScratchDir::~ScratchDir() {
  if (!owned_) return;
  const char* keep = std::getenv("ZKR_TESTING_KEEP_DIRS");
  if (keep && *keep && std::string_view(keep) != "0") return;
  std::error_code ec;
  fs::remove_all(path_, ec);  // best effort, never throws
}

}  // namespace zkr::testing::detail
