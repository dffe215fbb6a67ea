#pragma once
/// \file
/// `Participant`: one contender of a leader election (Curator's `Participant`), as `LeaderLatch` and
/// `LeaderSelector` report them.

#include <memory>
#include <ostream>
#include <string>
#include <vector>
#include <zkr/framework/detail/unique_function.hpp>
#include <zkr/framework/error.hpp>

namespace zkr {

/// One contender: the id its node carries (the node's data, decoded as text; a node without data gives "")
/// and whether it is the leader (the first node that could still be read). A plain value; `Participant{}` is
/// Curator's dummy ("", false), which `get_leader()` returns when there is no leader.
struct Participant {
  std::string id;
  bool is_leader = false;

  friend bool operator==(const Participant&, const Participant&) = default;
  /// `Participant{id='…', isLeader=…}`, as Curator's `toString`.
  friend std::ostream& operator<<(std::ostream& os, const Participant& p) {
    return os << "Participant{id='" << p.id << "', isLeader=" << (p.is_leader ? "true" : "false") << '}';
  }
};

namespace detail {

class LockInternals;

/// The participants of `engine`'s directory, in queue order (I/O thread; completes there): one unwatched read
/// per node, a node gone meanwhile is skipped, the first one read is the leader (Curator's
/// `getParticipants`). A missing directory gives none.
void read_participants(const std::shared_ptr<LockInternals>& engine,
                       unique_function<void(error_code, std::vector<Participant>)> done);

/// `read_participants` from a thread other than the I/O thread, waiting for the answer
/// (`client_errc::would_deadlock` on the I/O thread).
std::vector<Participant> read_participants_blocking(const std::shared_ptr<LockInternals>& engine,
                                                    error_code& ec);

/// The leader among `participants` (the first), or the dummy `Participant{}`.
Participant leader_of(const std::vector<Participant>& participants);

}  // namespace detail
}  // namespace zkr
