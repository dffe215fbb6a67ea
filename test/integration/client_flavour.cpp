// The C client flavour this test build links, compiled into this one file only (its definition comes from
// test/CMakeLists.txt), so that the other test objects are the same for both flavours.

#include "client_support.hpp"

namespace zkr::itest {

bool on_mt_client() {
  return std::string_view(ZKR_TEST_ZOOKEEPER_CLIENT) == "mt" && default_transport() == Transport::c_client;
}

bool on_native_transport() { return default_transport() == Transport::native; }

}  // namespace zkr::itest
