#pragma once
// Conversions between the ZooKeeper C client's types and ours, and the C-client helpers that do not need a
// running client (session expiry injection, log routing). Only framework/src includes <zookeeper.h>.

#include <zookeeper/zookeeper.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <spdlog/logger.h>
#include <string>
#include <vector>

#include <zkr/framework/types.hpp>

namespace zkr::detail {

inline zkr::Stat to_stat(const ::Stat* s) {
  zkr::Stat r;
  if (!s) return r;
  r.czxid = s->czxid;
  r.mzxid = s->mzxid;
  r.ctime = s->ctime;
  r.mtime = s->mtime;
  r.version = s->version;
  r.cversion = s->cversion;
  r.aversion = s->aversion;
  r.ephemeral_owner = s->ephemeralOwner;
  r.data_length = s->dataLength;
  r.num_children = s->numChildren;
  r.pzxid = s->pzxid;
  return r;
}

/// An ACL_vector that points into `acl` (valid while `acl` lives and is not modified).
class CAclVector {
 public:
  explicit CAclVector(const AclList& acl) {
    entries_.reserve(acl.size());
    for (const auto& a : acl)
      entries_.push_back(::ACL{a.perms, ::Id{const_cast<char*>(a.id.scheme.c_str()),
                                             const_cast<char*>(a.id.id.c_str())}});
    vec_.count = static_cast<std::int32_t>(entries_.size());
    vec_.data = entries_.data();
  }
  const ::ACL_vector* get() const noexcept { return &vec_; }

 private:
  std::vector<::ACL> entries_;
  ::ACL_vector vec_{};
};

int to_c_mode(CreateMode m) noexcept;

/// The single-threaded C client formats its log and endpoint text in process-wide static buffers, so calls into
/// it from the I/O threads of different clients must not overlap (found by ThreadSanitizer). Every call into the
/// C client holds this mutex; the calls are short and never re-enter (callbacks only post).
std::mutex& c_client_mutex() noexcept;

/// Routes the C client's log of the current thread to `logger` (null: to the fallback below).
void set_thread_log_target(spdlog::logger* logger) noexcept;
/// The multi-threaded C client logs from threads of its own, which have no target: their lines go to the
/// newest logger added here and not yet removed (a client's, while its handle is open), or nowhere.
void add_log_fallback(spdlog::logger* logger);
void remove_log_fallback(spdlog::logger* logger) noexcept;
/// The C client's log callback, routing to the thread's target.
void route_c_log(const char* message);
/// Points the C client's process-wide log stream (used for lines of a handle without a log callback) at
/// `route_c_log`, once. `zookeeper_init_ssl` takes no log callback: without this, its first lines would go to
/// stderr before the session sets one.
void route_c_log_stream() noexcept;

}  // namespace zkr::detail
