// Integration tests of CuratorFramework against a real ZooKeeper server: bad input (invalid paths through
// every operation and twin, data over the limit, invalid connect strings) is refused with a typed error.

#include <string>
#include <vector>

#include "client_support.hpp"
#include "completion_styles.hpp"
#include "twins.hpp"

using namespace zkr;
using namespace zkr::itest;

namespace {

const std::vector<std::string>& invalid_paths() {
  static const std::vector<std::string> paths = {
      "",
      "a",
      "a/b",
      "/a/",
      "/a//b",
      "//",
      "/.",
      "/a/.",
      "/a/./b",
      "/..",
      "/a/../b",
      std::string("/a\0b", 4),
      "/a\x01",
      "/a\x1e"
      "b",
      "/a\xc2\x80",
      "/a\xf0\x9f\x98\x80",
      "/a\xff",
  };
  return paths;
}

}  // namespace

TEST_CASE("bad input: invalid paths are refused by every operation", "[framework][input]") {
  auto c = connect_shared();
  for (const auto& path : invalid_paths()) {
    for (Twin t : all_twins) {
      for (auto& [op, ec] : every_op(*c, t, path)) {
        INFO("path: '" << path << "' op: " << op << " twin: " << twin_name(t));
        if (op == "create seq") {
          // Curator validates path + "1" for a sequential create: "/a/" and "/." pass ("/.1" is a valid
          // name).
          CHECK((ec == client_errc::invalid_path) == path_error(path, true).has_value());
          continue;
        }
        CHECK(ec == client_errc::invalid_path);
      }
    }
  }
  CHECK(op_multi(*c, Twin::error_code, {Op::create("/a/")}).ec == client_errc::invalid_path);
  // One bad operation spoils the whole transaction, before anything is sent.
  const auto root = unique_path("badmulti");
  CHECK(op_multi(*c, Twin::error_code, {Op::create(root), Op::create("/x//y")}).ec ==
        client_errc::invalid_path);
  CHECK_FALSE(c->exists(root));
  // The root cannot be deleted.
  CHECK(thrown_by([&] { c->remove("/"); }) == client_errc::invalid_path);
}

TEST_CASE("bad input: data over the limit", "[framework][input]") {
  auto c = connect_shared();
  const auto root = unique_path("big");
  c->create(root);
  const std::string too_big(default_max_data_size + 1, 'x');
  for (Twin t : all_twins) {
    INFO("twin: " << twin_name(t));
    CHECK(op_create(*c, t, root + "/n", {.data = too_big}).ec == client_errc::data_too_large);
    CHECK(op_set_data(*c, t, root, too_big).ec == client_errc::data_too_large);
    CHECK(op_multi(*c, t, {Op::create(root + "/n", too_big)}).ec == client_errc::data_too_large);
    CHECK(op_multi(*c, t, {Op::set_data(root, too_big)}).ec == client_errc::data_too_large);
  }
  CHECK_FALSE(c->exists(root + "/n"));
  // The largest accepted size really is accepted by the server.
  const std::string largest(default_max_data_size, 'y');
  c->create(root + "/largest", {.data = largest});
  CHECK(c->get_data(root + "/largest").data.size() == largest.size());
  CHECK(c->set_data(root + "/largest", largest).data_length == static_cast<int>(largest.size()));

  // The limit is configurable, through the builder or the config.
  auto small = test_builder(shared_server().connect_string()).max_data_size(4).build();
  small->start();
  REQUIRE(small->block_until_connected(10s));
  CHECK(thrown_by([&] { small->create(root + "/s", {.data = std::string("12345")}); }) ==
        client_errc::data_too_large);
  CHECK(thrown_by([&] { small->set_data(root, "12345"); }) == client_errc::data_too_large);
  small->create(root + "/s", {.data = std::string("1234")});
  auto cfg = test_builder(shared_server().connect_string()).config();
  cfg.max_data_size = 2;
  CuratorFramework smaller(cfg);
  smaller.start();
  REQUIRE(smaller.block_until_connected(10s));
  CHECK(thrown_by([&] { smaller.set_data(root, "123"); }) == client_errc::data_too_large);
}

TEST_CASE("bad input: invalid connect strings fail start", "[framework][input]") {
  for (std::string cs : {"", "localhost", "127.0.0.1", "127.0.0.1:", ":2181", "127.0.0.1:abc",
                         "127.0.0.1:2181,", ",127.0.0.1:2181", "127.0.0.1:2181,,127.0.0.1:2182", "/chroot",
                         "127.0.0.1:-1", "127.0.0.1:99999", "127.0.0.1:0"}) {
    INFO("connect string: '" << cs << "'");
    auto c = test_builder(cs).build();
    error_code ec;
    c->start(ec);
    CHECK(ec == client_errc::invalid_connect_string);
    CHECK_FALSE(c->is_started());
    auto c2 = test_builder(cs).build();
    CHECK(thrown_by([&] { c2->start(); }) == client_errc::invalid_connect_string);
    CHECK(op_create(*c2, Twin::error_code, "/x").ec == client_errc::not_started);
  }
  // Several servers and a chroot suffix are valid.
  auto ok = test_builder(shared_server().connect_string() + "," + shared_server().connect_string()).build();
  ok->start();
  CHECK(ok->block_until_connected(10s));
}
