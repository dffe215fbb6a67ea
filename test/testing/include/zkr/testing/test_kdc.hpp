#pragma once
/// \file
/// `TestKdc`: a throw-away Kerberos realm (MIT `krb5kdc`) for GSSAPI test servers and clients.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <zkr/testing/sasl_options.hpp>

namespace zkr::testing {

namespace detail {
class ChildProcess;
class ScratchDir;
}  // namespace detail

/// A Kerberos realm of its own, on 127.0.0.1: in a scratch directory, a `krb5.conf` (the realm, its KDC on a
/// free port reached over TCP, no DNS look-ups, `localhost` mapped to the realm), a `kdc.conf`, a database
/// made by `kdb5_util` with a random master password, and MIT's `krb5kdc` running in the foreground as a
/// child of this process (killed by its pid in the destructor). Principals and their keytabs are made with
/// `kadmin.local`. Needs Debian's `krb5-kdc`, `krb5-admin-server` (`/usr/sbin`). Takes well under a second.
///
/// Programs that should use this realm need `krb5_conf()`: Java takes it as `-Djava.security.krb5.conf`
/// (`server_options()` does that for a test server), MIT's library (and so a zkrecipes client's GSSAPI) from
/// `$KRB5_CONFIG`.
///
/// Thread-safety: all members may be called concurrently. The files live as long as this object (longer if
/// `dir` was given, or `ZKR_TESTING_KEEP_DIRS` is set).
class TestKdc {
 public:
  /// Creates the realm `realm` (upper case by custom) and starts its KDC.
  /// \throws TestingError when a Kerberos program is missing or fails (with its output), or the KDC does not
  /// accept connections within 10 s.
  explicit TestKdc(std::string realm = "ZKR.TEST", std::optional<std::filesystem::path> dir = std::nullopt);
  /// Kills the KDC and removes a temporary directory. Never throws.
  ~TestKdc();
  TestKdc(const TestKdc&) = delete;
  TestKdc& operator=(const TestKdc&) = delete;

  /// Makes principal `name` (without realm, e.g. "alice" or "zookeeper/localhost": letters, digits, `-`, `_`,
  /// `.` and one `/`) with random keys, and a keytab holding them; returns the keytab's path. A later call
  /// for the same name returns the same keytab. \throws TestingError as the constructor, and for an invalid
  /// name.
  std::filesystem::path add_principal(const std::string& name);
  /// Deletes principal `name` from the realm; its keytab stays (and is useless from then on).
  void remove_principal(const std::string& name);
  /// Caps the life of the tickets the KDC issues to principal `name` (its `maxlife`), e.g. to see a client's
  /// tickets expire within a test. \throws TestingError as `add_principal`.
  void set_ticket_life(const std::string& name, std::chrono::seconds life);
  /// How many initial tickets (AS exchanges: a password or keytab login) the KDC has issued to principal
  /// `name` so far, read from its log.
  std::size_t initial_tickets_issued(const std::string& name) const;
  /// `name@REALM`.
  std::string principal(const std::string& name) const;
  /// Kerberos settings for `ServerOptions::sasl`: the principal "zookeeper/<host>" (made at the first call
  /// for that host), its keytab and `krb5_conf()`.
  SaslServerOptions server_options(const std::string& host = "localhost");

  /// Stops the KDC (a realm whose KDC is down); `start()` runs it again. Never throws.
  void stop() noexcept;
  /// Starts the KDC again after `stop()` (no-op while it runs). \throws TestingError as the constructor.
  void start();

  const std::string& realm() const noexcept { return realm_; }
  /// The KDC's port on 127.0.0.1 (TCP and UDP).
  std::uint16_t port() const noexcept { return port_; }
  /// The `krb5.conf` of the realm.
  std::filesystem::path krb5_conf() const;
  /// The directory holding every file.
  const std::filesystem::path& dir() const;

 private:
  void kadmin(const std::string& query, const std::string& what);

  std::string realm_;
  std::unique_ptr<detail::ScratchDir> dir_;
  std::uint16_t port_ = 0;
  std::mutex mutex_;  // the database and keytabs (kadmin.local), and the KDC process
  std::unique_ptr<detail::ChildProcess> kdc_;
  std::map<std::string, std::filesystem::path> keytabs_;
};

}  // namespace zkr::testing
