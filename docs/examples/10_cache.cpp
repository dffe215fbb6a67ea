// 10: caches. A CuratorCache follows a small configuration tree: the listener (built with Curator's listener
// builder) prints each create, change and delete; the program waits for the first load, changes the tree
// through the client, and reads the cache once it has seen the changes.
//
//   example_10_cache 127.0.0.1:2181
#include <atomic>
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
  client.create("/examples/config/db/url", {.creating_parents = true, .data = "zk://one"});

  std::atomic<int> deletes{0};
  auto cache = zkr::CuratorCache::build(client, "/examples/config");
  cache.add_listener(
      zkr::CuratorCacheListener::builder()
          .for_creates_and_changes([](const std::optional<zkr::ChildData>& old, const zkr::ChildData& n) {
            std::printf("%s %s = '%s'\n", old ? "changed" : "created", n.path.c_str(), n.data.c_str());
          })
          .for_deletes([&](const zkr::ChildData& n) {
            std::printf("deleted %s\n", n.path.c_str());
            ++deletes;
          })
          .for_initialized([] { std::printf("initialized\n"); })
          .build());
  cache.start();
  if (!cache.await_initialized(30s)) return 1;
  std::printf("%zu nodes cached\n", cache.size());

  client.set_data("/examples/config/db/url", "zk://two");
  client.create("/examples/config/db/pool", {.data = "8"});
  client.remove("/examples/config/db/url");
  // The cache follows the server: wait (bounded) until it has seen both changes.
  for (int i = 0; i < 3000 && (deletes.load() == 0 || !cache.get("/examples/config/db/pool")); ++i)
    std::this_thread::sleep_for(10ms);
  auto pool = cache.get("/examples/config/db/pool");
  if (deletes.load() != 1 || !pool || pool->data != "8" || cache.get("/examples/config/db/url")) return 1;
  std::printf("pool = %s\n", pool->data.c_str());
  cache.close();
  client.remove("/examples/config", {.deleting_children = true});
  return 0;
}
