#pragma once
// The commands that look at or poke a lock without holding it: `zkr inspect` and `zkr revoke`.

#include <string>

#include "common.hpp"

namespace zkr::cli {

/// How `zkr inspect` reads a directory.
enum class LockKind { automatic, mutex, read_write, semaphore, latch, selector };

/// `zkr inspect PATH [--json] [--type ...]`: prints the queue of a lock directory, or the participants and
/// leader of a leader election, on stdout.
int inspect(const CommonOptions& common, const std::string& path, LockKind kind, bool json);

/// `zkr revoke NODE_PATH`: `Revoker::attempt_revoke`.
int revoke(const CommonOptions& common, const std::string& node_path);

}  // namespace zkr::cli
