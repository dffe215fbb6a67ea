#pragma once
// A directory for a test server's files: a fresh temporary one (removed on destruction) or one the user gave.

#include <filesystem>
#include <optional>
#include <string_view>

namespace zkr::testing::detail {

class ScratchDir {
 public:
  /// Uses (and creates) `given` if set, else creates `<temp>/zkr-<kind>-XXXXXX`. \throws TestingError.
  ScratchDir(const std::optional<std::filesystem::path>& given, std::string_view kind);
  /// Removes a temporary directory unless `ZKR_TESTING_KEEP_DIRS` is set. Never throws.
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
  bool owned_ = false;
};

}  // namespace zkr::testing::detail
