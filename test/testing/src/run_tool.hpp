#pragma once
// Finding and running the command-line tools the testing library uses (openssl, keytool, java).

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zkr::testing::detail {

/// Whether `p` is a regular file this process may execute.
bool is_executable_file(const std::filesystem::path& p);

/// The absolute path of executable `name` in the directories of `$PATH`, if any.
std::optional<std::filesystem::path> find_on_path(std::string_view name);

/// Runs `argv` (argv[0] an absolute path) with stdin from `input`, its output appended to `log`, and waits
/// at most `timeout`. Returns whether it exited with status 0; a child still running at the deadline is
/// killed and counts as failed. `env`: "NAME=value" entries added to its environment.
bool run_bounded(const std::vector<std::string>& argv, const std::filesystem::path& log,
                 std::chrono::milliseconds timeout, const std::filesystem::path& input = "/dev/null",
                 const std::vector<std::string>& env = {});

/// `run_bounded` for a step that must succeed: \throws TestingError naming `what`, with the tail of `log`.
void run_tool(const std::vector<std::string>& argv, const std::filesystem::path& log, std::string_view what,
              std::chrono::milliseconds timeout = std::chrono::seconds{60},
              const std::vector<std::string>& env = {});

}  // namespace zkr::testing::detail
