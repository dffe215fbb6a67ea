// api.token_signature (test/CMakeLists.txt): a completion handler whose signature does not match the
// operation's is refused at the call by the token's constraint (`boost::asio::completion_token_for`), and
// must NOT compile. With -DZKR_TOKEN_OK (api.token_signature_ok) the matching handler must compile, which
// proves the harness and the snippet.
#include <zkr/zkrecipes.hpp>

void token_signature(zkr::CuratorFramework& client, zkr::InterProcessMutex& m) {
#ifdef ZKR_TOKEN_OK
  client.async_get_data("/x", {}, [](zkr::error_code, zkr::NodeData) {});
  m.async_acquire([](zkr::error_code, zkr::Lease) {});
#else
  m.async_acquire([](zkr::error_code, std::string) {});
  client.async_get_data("/x", {}, [](int) {});
#endif
}
