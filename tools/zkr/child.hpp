#pragma once
// Running COMMAND as a child process: posix_spawnp with a clean signal state, extra environment variables,
// and none of zkr's own descriptors (the ZooKeeper socket, Asio's internals) leaking into it.

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace zkr::cli {

/// Remembers the descriptors open when zkr started (they belong to the caller and are passed on to COMMAND,
/// as flock does). Call first thing in main().
void record_inherited_descriptors();

/// Remembers which signals were ignored (SIG_IGN) when zkr started, as `nohup` leaves SIGHUP. Call first
/// thing in main(), before any handler is installed.
void record_signal_dispositions();

/// Whether `sig` was ignored when zkr started (never true for SIGCHLD, which zkr needs to reap COMMAND). zkr
/// installs no handler for such a signal and COMMAND inherits it ignored.
bool ignored_at_start(int sig);

/// Spawns `argv` (searched in PATH) with the current environment plus `extra_env` (overriding variables of
/// the same name). Every descriptor zkr opened itself is made close-on-exec first; the child starts with an
/// empty signal mask and the default disposition for every signal except those ignored when zkr started.
/// `new_group`: the child leads a process group of its own (set in the child before exec). Returns the pid,
/// or -errno when the spawn failed (ENOENT: not found; EACCES/ENOEXEC...: cannot execute).
pid_t spawn_command(const std::vector<std::string>& argv,
                    const std::vector<std::pair<std::string, std::string>>& extra_env, bool new_group);

/// The conventional shell status of a waitpid() status: the exit code, or 128+N for death by signal N.
int shell_status(int wait_status);

}  // namespace zkr::cli
