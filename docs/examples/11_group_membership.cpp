// 11: persistent nodes and group membership. A service registers itself with a PersistentNode (an ephemeral
// node that comes back after a session expiry or a delete by someone else) and joins a group with a
// GroupMember; the program lists the group, survives an injected session expiry, and leaves.
//
//   example_11_group_membership 127.0.0.1:2181
#include <chrono>
#include <cstdio>
#include <thread>
#include <zkr/zkrecipes.hpp>

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  const std::string connect = argc > 1 ? argv[1] : "127.0.0.1:2181";
  zkr::CuratorFramework client(
      {.connect_string = connect, .retry_policy = std::make_shared<zkr::RetryNTimes>(3, zkr::Millis(100))});
  client.start();

  // A registration: /examples/services/_c_<uuid>-api-<sequence>, ephemeral, with our address as data.
  zkr::PersistentNode registration(client, zkr::CreateMode::ephemeral_sequential, /*use_protection=*/true,
                                   "/examples/services/api-", "10.0.0.7:8080");
  registration.start();
  if (!registration.wait_for_initial_create(30s)) return 1;
  std::printf("registered as %s\n", registration.actual_path().c_str());

  // Two members of one group (in one process here; normally one per process).
  zkr::GroupMember one(client, "/examples/group", "worker-1", "idle");
  zkr::GroupMember two(client, "/examples/group", "worker-2", "idle");
  one.start();
  two.start();
  auto wait_for = [](auto&& pred) {
    for (int i = 0; i < 3000 && !pred(); ++i) std::this_thread::sleep_for(10ms);
    return pred();
  };
  if (!wait_for([&] { return one.get_current_members().size() == 2; })) return 1;
  two.set_this_data("busy");
  if (!wait_for([&] { return one.get_current_members()["worker-2"] == "busy"; })) return 1;
  for (auto& [id, data] : one.get_current_members()) std::printf("member %s: %s\n", id.c_str(), data.c_str());

  // The session expires: every ephemeral node goes; the registration and the members come back.
  const auto path = registration.actual_path();
  client.inject_session_expiration();
  if (!wait_for([&] {
        zkr::error_code ec;
        auto s = client.exists(path, {}, ec);
        return !ec && s && s->ephemeral_owner == client.session_id() &&
               client.exists("/examples/group/worker-2", {}, ec);
      }))
    return 1;
  std::printf("after the expiry: %s is back, with the same name\n", path.c_str());

  two.close();
  one.close();
  registration.close();
  std::printf("left: %s\n", client.exists(path) ? "no" : "yes");
  return client.exists(path) ? 1 : 0;
}
