#pragma once
/// \file
/// `Revoker`: asks the holder of a revocable lock to give it up (Curator's `Revoker`).

#include <string>
#include <string_view>
#include <zkr/framework/curator_framework.hpp>

namespace zkr {

/// The data a revocable lock's node is set to by `Revoker::attempt_revoke` (Curator's `REVOKE_MESSAGE`).
inline constexpr std::string_view revoke_message = "__REVOKE__";

/// Curator's `Revoker`. Revocation is cooperative: the holder made its lock revocable
/// (`InterProcessMutex::make_revocable`, also on the read and write locks) and its listener decides what to
/// do. Interoperates with Java Curator both ways (same message, same node).
class Revoker {
 public:
  /// Sets the data of the lock node `node_path` (a full path, e.g. from `participant_nodes()`) to
  /// "__REVOKE__". A node that no longer exists is not an error (Curator ignores NoNode). Other errors are
  /// the client's (closed, connection, no_auth...). Thread-safe; blocking (not on the client's I/O thread).
  static void attempt_revoke(CuratorFramework& client, const std::string& node_path);
  static void attempt_revoke(CuratorFramework& client, const std::string& node_path, error_code& ec);

  /// Asynchronous twin. Handler: `void(error_code)`. Executor: the handler's, else the client's completion
  /// executor. Cancellation: terminal only: completes at once with `operation_aborted`; a write already sent
  /// may still apply. Errors: as `attempt_revoke`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  static auto async_attempt_revoke(CuratorFramework& client, std::string node_path, Token&& token = {}) {
    detail::OpInfo info{"attempt_revoke", node_path, detail::Cancellation::write};
    return detail::async_run<>(detail::access::core(client), std::move(info), std::forward<Token>(token),
                               [core = detail::access::core(client), p = std::move(node_path)](
                                   auto cb) mutable { start(core, std::move(p), std::move(cb)); });
  }

 private:
  static void start(const std::shared_ptr<detail::Core>& core, std::string path, detail::VoidCallback cb);
};

}  // namespace zkr
