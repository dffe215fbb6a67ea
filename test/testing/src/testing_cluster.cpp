#include <stdexcept>
#include <thread>
#include <zkr/testing/java.hpp>
#include <zkr/testing/testing_cluster.hpp>
#include <zkr/testing/testing_server.hpp>

#include "scratch_dir.hpp"
#include "server_instance.hpp"

namespace zkr::testing {
namespace {
using detail::Clock;
using std::chrono::milliseconds;

bool is_serving_mode(const std::string& mode) {
  return mode == "leader" || mode == "follower" || mode == "observer" || mode == "standalone";
}
}  // namespace

TestingCluster::TestingCluster(std::size_t size, ServerOptions options)
    : start_timeout_(options.start_timeout) {
  if (size == 0) throw std::invalid_argument("TestingCluster: size must be at least 1");
  if (options.port != 0 && options.port + size - 1 > 65535) {
    throw std::invalid_argument("TestingCluster: client ports " + std::to_string(options.port) + "+" +
                                std::to_string(size) + " exceed 65535");
  }
  const auto java = find_java(options.java);
  const auto classpath = zookeeper_classpath();
  dir_ = std::make_unique<detail::ScratchDir>(options.data_dir, "cluster");

  for (int attempt = 1;; ++attempt) {
    std::vector<detail::QuorumPeer> peers;
    for (std::size_t i = 0; i < size; ++i)
      peers.push_back({static_cast<int>(i + 1), free_port(), free_port()});
    if (size == 1) peers.clear();  // one member: a standalone server
    members_.clear();
    for (std::size_t i = 0; i < size; ++i) {
      const auto ports = detail::pick_client_ports(options, i);
      detail::InstanceConfig config{dir_->path() / ("member-" + std::to_string(i)), ports.plain,
                                    size == 1 ? 0 : static_cast<int>(i + 1), peers, ports.secure};
      members_.push_back(
          std::make_unique<detail::ServerInstance>(options, java, classpath, std::move(config)));
    }
    try {
      start_all();
      return;
    } catch (const detail::PortInUseError&) {
      if (attempt == 3) throw;
      for (auto& m : members_) m->kill();
      // Quorum and election ports are always ours to pick; with fixed client ports only retry if those are
      // free.
    }
  }
}

TestingCluster::~TestingCluster() =
    default;  // each ServerInstance kills its process, then ScratchDir removes
TestingCluster::TestingCluster(TestingCluster&&) noexcept = default;
TestingCluster& TestingCluster::operator=(TestingCluster&&) noexcept = default;

void TestingCluster::check_index(std::size_t i) const {
  if (i >= members_.size()) {
    throw std::out_of_range("TestingCluster: member " + std::to_string(i) + " of a cluster of " +
                            std::to_string(members_.size()));
  }
}

std::string TestingCluster::connect_string() const {
  std::string s;
  for (std::size_t i = 0; i < members_.size(); ++i) s += (i ? "," : "") + member_connect_string(i);
  return s;
}

std::string TestingCluster::secure_connect_string() const {
  std::string s;
  for (std::size_t i = 0; i < members_.size(); ++i) s += (i ? "," : "") + member_secure_connect_string(i);
  return s;
}

std::size_t TestingCluster::size() const { return members_.size(); }

std::string TestingCluster::member_connect_string(std::size_t i) const {
  if (member_port(i) == 0) throw TestingError("TestingCluster: the members have no plain client port");
  return "127.0.0.1:" + std::to_string(member_port(i));
}

std::string TestingCluster::member_secure_connect_string(std::size_t i) const {
  if (member_secure_port(i) == 0) throw TestingError("TestingCluster: the members run without TLS");
  return "127.0.0.1:" + std::to_string(member_secure_port(i));
}

std::uint16_t TestingCluster::member_secure_port(std::size_t i) const {
  check_index(i);
  return members_[i]->secure_port();
}

std::uint16_t TestingCluster::member_port(std::size_t i) const {
  check_index(i);
  return members_[i]->client_port();
}

void TestingCluster::kill(std::size_t i) {
  check_index(i);
  members_[i]->kill();
}

void TestingCluster::stop(std::size_t i) {
  check_index(i);
  members_[i]->stop();
}

void TestingCluster::start(std::size_t i) {
  check_index(i);
  if (members_[i]->is_running()) return;
  const auto deadline = Clock::now() + start_timeout_;
  members_[i]->start();
  std::size_t running = 0;
  for (const auto& m : members_) running += m->is_running() ? 1 : 0;
  if (running * 2 <= members_.size()) return;  // no quorum: it cannot serve yet
  while (!is_serving_mode(members_[i]->mode(milliseconds{1000}))) {
    if (Clock::now() >= deadline) {
      throw TestingError(members_[i]->describe() + " answers but did not join the quorum within " +
                         std::to_string(start_timeout_.count()) + " ms" + members_[i]->log_tail());
    }
    std::this_thread::sleep_for(milliseconds{50});
  }
}

void TestingCluster::restart(std::size_t i) {
  stop(i);
  start(i);
}

void TestingCluster::pause(std::size_t i) {
  check_index(i);
  members_[i]->pause();
}

void TestingCluster::resume(std::size_t i) {
  check_index(i);
  members_[i]->resume();
}

void TestingCluster::stop_all() {
  // SIGTERM everyone first, so the members shut down in parallel.
  std::vector<std::thread> stoppers;
  for (auto& m : members_) stoppers.emplace_back([&m] { m->stop(); });
  for (auto& t : stoppers) t.join();
}

void TestingCluster::start_all() {
  const auto deadline = Clock::now() + start_timeout_;
  std::vector<detail::ServerInstance*> launched;
  for (auto& m : members_) {
    if (m->is_running()) continue;
    m->launch();
    launched.push_back(m.get());
  }
  for (auto* m : launched) m->wait_until_answering(deadline, members_.size() == 1);
  wait_until_serving(deadline);
}

bool TestingCluster::is_running(std::size_t i) const {
  check_index(i);
  return members_[i]->is_running();
}

int TestingCluster::pid(std::size_t i) const {
  check_index(i);
  return members_[i]->pid();
}

void TestingCluster::wait_until_serving(Clock::time_point deadline) const {
  for (;;) {
    bool all = true;
    bool has_leader = false;
    std::string states;
    for (const auto& m : members_) {
      if (!m->is_running()) continue;
      const std::string mode = m->mode(milliseconds{1000});
      all = all && is_serving_mode(mode);
      has_leader = has_leader || mode == "leader" || mode == "standalone";
      states += "\n  " + m->describe() + ": " + (mode.empty() ? "not serving" : mode);
    }
    if (all && has_leader) return;
    if (Clock::now() >= deadline) {
      throw TestingError("the ZooKeeper ensemble did not elect a leader and serve within " +
                         std::to_string(start_timeout_.count()) + " ms; members:" + states + "\nlogs under " +
                         dir_->path().string());
    }
    std::this_thread::sleep_for(milliseconds{50});
  }
}

std::optional<std::size_t> TestingCluster::leader() const {
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (!members_[i]->is_running()) continue;
    const std::string mode = members_[i]->mode(milliseconds{2000});
    if (mode == "leader" || mode == "standalone") return i;
  }
  return std::nullopt;
}

std::size_t TestingCluster::wait_for_leader(milliseconds timeout) const {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (auto l = leader()) return *l;
    if (Clock::now() >= deadline) {
      throw TestingError("no ZooKeeper leader elected within " + std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(milliseconds{50});
  }
}

std::string TestingCluster::four_letter_word(std::size_t i, std::string_view cmd,
                                             milliseconds timeout) const {
  check_index(i);
  return members_[i]->four_letter_word(cmd, timeout);
}

std::map<std::string, std::string> TestingCluster::mntr(std::size_t i) const {
  return parse_mntr(four_letter_word(i, "mntr"));
}

const std::filesystem::path& TestingCluster::data_dir() const { return dir_->path(); }

std::filesystem::path TestingCluster::member_data_dir(std::size_t i) const {
  check_index(i);
  return members_[i]->dir();
}

}  // namespace zkr::testing
