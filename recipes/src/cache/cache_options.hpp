#pragma once
// Shared by the cache classes' sources: the path check and the options of the engine.

#include <string>
#include <zkr/framework/error.hpp>
#include <zkr/framework/paths.hpp>
#include <zkr/recipes/detail/cache_core.hpp>

namespace zkr::detail {

/// The engine's options for `path`, after Curator's path rules (`Error` with `client_errc::invalid_path`).
inline TreeSyncOptions cache_options(std::string path, const char* what) {
  if (auto why = path_error(path))
    throw Error(client_errc::invalid_path, std::string(what) + ": " + *why, path);
  TreeSyncOptions o;
  o.root = std::move(path);
  return o;
}

}  // namespace zkr::detail
