#include "run_tool.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <zkr/testing/server_options.hpp>

#include "child_process.hpp"

namespace zkr::testing::detail {
namespace fs = std::filesystem;

bool is_executable_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::optional<fs::path> find_on_path(std::string_view name) {
  const char* path_env = std::getenv("PATH");
  const std::string_view path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  for (std::size_t pos = 0; pos <= path.size();) {
    const std::size_t end = std::min(path.find(':', pos), path.size());
    const std::string_view entry = path.substr(pos, end - pos);
    const fs::path candidate = fs::path(entry.empty() ? "." : std::string(entry)) / name;
    if (is_executable_file(candidate)) return fs::absolute(candidate);
    pos = end + 1;
  }
  return std::nullopt;
}

bool run_bounded(const std::vector<std::string>& argv, const fs::path& log, std::chrono::milliseconds timeout,
                 const fs::path& input, const std::vector<std::string>& env) {
  ChildProcess child(argv, log, input, env);
  if (!child.wait_for_exit(timeout)) {
    child.kill_and_wait();
    return false;
  }
  return child.exit_code() == 0;
}

void run_tool(const std::vector<std::string>& argv, const fs::path& log, std::string_view what,
              std::chrono::milliseconds timeout, const std::vector<std::string>& env) {
  if (run_bounded(argv, log, timeout, "/dev/null", env)) return;
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > 4000) text.erase(0, text.size() - 4000);
  throw TestingError("cannot " + std::string(what) + ": " + argv[0] + " failed or did not finish within " +
                     std::to_string(timeout.count()) + " ms\n--- " + log.string() + " ---\n" + text);
}

}  // namespace zkr::testing::detail
