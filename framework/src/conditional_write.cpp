// The recheck of a conditional write whose answer was lost (RequestOptions::conditional): once connected
// again, a sync and an exists of its path tell whether the write was applied. The sync comes first: the
// server now serving the session may be behind the one that took the write. A write not applied by then
// never will be (a server refuses the requests of a session that has moved on to another), so a node as it
// was before the write means the write may be sent again.

#include "core_impl.hpp"

namespace zkr::detail {

std::shared_ptr<CoreImpl::Attempt> CoreImpl::lost_write_check(
    const RequestOptions& ro, const std::string& full_path, std::function<bool(const zkr::Stat*)> unchanged) {
  if (!ro.conditional) return nullptr;
  return std::make_shared<Attempt>([this, full_path, unchanged = std::move(unchanged)](Done k) {
    session_->submit(
        zk::Sync{full_path}, [this, full_path, unchanged, k = std::move(k)](zk::Reply r) mutable {
          if (r.ec) return k(r.ec);
          session_->submit(zk::Exists{full_path}, [unchanged, k = std::move(k)](zk::Reply r) mutable {
            if (r.ec && r.ec != zk_errc::no_node) return k(r.ec);
            k(unchanged(r.ec ? nullptr : &r.stat) ? error_code{} : error_code(client_errc::outcome_unknown));
          });
        });
  });
}

std::shared_ptr<CoreImpl::Attempt> CoreImpl::version_check(const RequestOptions& ro,
                                                           const std::string& full_path, int version) {
  if (!ro.conditional || version == -1)
    return nullptr;  // no copy of the path on the common, unconditional path
  return lost_write_check(ro, full_path,
                          [version](const zkr::Stat* s) { return s && s->version == version; });
}

}  // namespace zkr::detail
