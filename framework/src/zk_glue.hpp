#pragma once
// The C client's transport (c_session.hpp, st_session.hpp, mt_session.hpp): conversions between the ZooKeeper
// C client's types and ours, and the process-wide C-client mutex. Only the C-client transport's files include
// this header, and with it <zookeeper.h>; its log routing is in c_client_log.hpp.

#include <spdlog/logger.h>
#include <zookeeper/zookeeper.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>
#include <zkr/framework/types.hpp>

#include "c_client_log.hpp"

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
      entries_.push_back(
          ::ACL{a.perms, ::Id{const_cast<char*>(a.id.scheme.c_str()), const_cast<char*>(a.id.id.c_str())}});
    vec_.count = static_cast<std::int32_t>(entries_.size());
    vec_.data = entries_.data();
  }
  const ::ACL_vector* get() const noexcept { return &vec_; }

 private:
  std::vector<::ACL> entries_;
  ::ACL_vector vec_{};
};

int to_c_mode(CreateMode m) noexcept;

/// The single-threaded C client formats its log and endpoint text in process-wide static buffers, so calls
/// into it from the I/O threads of different clients must not overlap (found by ThreadSanitizer). Every call
/// into the C client holds this mutex; the calls are short and never re-enter (callbacks only post).
std::mutex& c_client_mutex() noexcept;

}  // namespace zkr::detail
