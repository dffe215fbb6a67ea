#pragma once
// zkrecipes's own checks of TLS settings, before the ZooKeeper C client reads them (docs/tls.md): the C
// client reads the files at every connection attempt and, when one is missing or its key does not open, loops
// at full speed in its TLS-connecting state without telling anyone. Also the one string the C client takes
// the settings as.

#include <string>
#include <zkr/framework/curator_framework.hpp>

namespace zkr::detail {

/// What is wrong with TLS settings; no `ec` when nothing is.
struct TlsProblem {
  error_code ec;        // client_errc::tls_unsupported, tls_file_error or tls_key_error
  std::string subject;  // the file (or setting) at fault
  std::string reason;   // what is wrong with it (never the password)
};

/// Checks that this build speaks TLS, and that the files load the way the C client will load them: the CA
/// file, the certificate chain (and that it has not expired), the key with the password, the key matching
/// the certificate; and that no path and no password holds a comma (the C client splits on them).
TlsProblem check_tls_settings(const TlsConfig& tls);

/// The settings as `zookeeper_init_ssl` takes them: "CA,CERT,KEY[,PASSWORD]" (commas refused above).
std::string c_client_cert_string(const TlsConfig& tls);

}  // namespace zkr::detail
