#include "scratch_dir.hpp"

#include <stdlib.h>  // mkdtemp
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>
#include <zkr/testing/server_options.hpp>

namespace zkr::testing::detail {
namespace fs = std::filesystem;

namespace {

constexpr const char* owner_file = ".zkr-owner";

bool keep_dirs() {
  const char* keep = std::getenv("ZKR_TESTING_KEEP_DIRS");
  return keep && *keep && std::string_view(keep) != "0";
}

// The start time of a process (field 22 of /proc/<pid>/stat), which tells a live owner from a reused pid.
std::string start_time(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  if (paren == std::string::npos) return {};
  std::istringstream fields(line.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  return field;
}

// Temporary directories are removed by their owner's destructor, which never runs when a test process
// crashes or is killed (its servers die with it: PR_SET_PDEATHSIG). Once per process, remove the directories
// whose owner (recorded in `.zkr-owner` as "<pid> <start time>") is gone. Directories without that file are
// never touched.
void sweep_orphans(const fs::path& base) {
  static std::once_flag once;
  std::call_once(once, [&] {
    if (keep_dirs()) return;
    std::error_code ec;
    for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.rfind("zkr-server-", 0) != 0 && name.rfind("zkr-cluster-", 0) != 0 &&
          name.rfind("zkr-certs-", 0) != 0 && name.rfind("zkr-kdc-", 0) != 0)
        continue;
      std::ifstream owner(it->path() / owner_file);
      std::string pid, started;
      if (!(owner >> pid >> started) || pid.find_first_not_of("0123456789") != std::string::npos) continue;
      if (start_time(pid) == started) continue;  // the owner is alive
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  });
}

}  // namespace

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
  const std::string self = std::to_string(::getpid());
  std::ofstream(path_ / owner_file) << self << ' ' << start_time(self) << '\n';
  sweep_orphans(base);
}

ScratchDir::~ScratchDir() {
  if (!owned_ || keep_dirs()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);  // best effort, never throws
}

}  // namespace zkr::testing::detail
