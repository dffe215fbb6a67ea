#include <zkr/testing/java.hpp>
#include <zkr/testing/testing_server.hpp>

#include "scratch_dir.hpp"
#include "server_instance.hpp"

namespace zkr::testing {

TestingServer::TestingServer(ServerOptions options) {
  const auto java = find_java(options.java);
  const auto classpath = zookeeper_classpath();
  dir_ = std::make_unique<detail::ScratchDir>(options.data_dir, "server");
  const bool pick_port = detail::picks_client_ports(options);
  for (int attempt = 1;; ++attempt) {
    const auto ports = detail::pick_client_ports(options);
    detail::InstanceConfig config{dir_->path(), ports.plain, 0, {}, ports.secure};
    server_ = std::make_unique<detail::ServerInstance>(options, java, classpath, std::move(config));
    try {
      server_->start();
      return;
    } catch (const detail::PortInUseError&) {
      // Someone took the port we picked between the check and the bind: pick another one.
      if (!pick_port || attempt == 3) throw;
      server_->kill();
    }
  }
}

TestingServer::~TestingServer() = default;  // ServerInstance kills, then ScratchDir removes
TestingServer::TestingServer(TestingServer&&) noexcept = default;
TestingServer& TestingServer::operator=(TestingServer&&) noexcept = default;

std::string TestingServer::connect_string() const {
  if (port() == 0) throw TestingError("TestingServer::connect_string: the server has no plain client port");
  return "127.0.0.1:" + std::to_string(port());
}
std::uint16_t TestingServer::port() const { return server_->client_port(); }
std::string TestingServer::secure_connect_string() const {
  if (secure_port() == 0) throw TestingError("TestingServer::secure_connect_string: the server has no TLS");
  return "127.0.0.1:" + std::to_string(secure_port());
}
std::uint16_t TestingServer::secure_port() const { return server_->secure_port(); }
void TestingServer::stop() { server_->stop(); }
void TestingServer::start() { server_->start(); }
void TestingServer::restart() {
  server_->stop();
  server_->start();
}
void TestingServer::kill() { server_->kill(); }
void TestingServer::pause() { server_->pause(); }
void TestingServer::resume() { server_->resume(); }
bool TestingServer::is_running() const { return server_->is_running(); }
int TestingServer::pid() const { return server_->pid(); }

std::string TestingServer::four_letter_word(std::string_view cmd, std::chrono::milliseconds timeout) const {
  return server_->four_letter_word(cmd, timeout);
}

std::map<std::string, std::string> TestingServer::mntr() const {
  return parse_mntr(four_letter_word("mntr"));
}

const std::filesystem::path& TestingServer::data_dir() const { return dir_->path(); }

std::map<std::string, std::string> parse_mntr(std::string_view answer) {
  std::map<std::string, std::string> result;
  while (!answer.empty()) {
    const auto eol = answer.find('\n');
    std::string_view line = answer.substr(0, eol);
    answer = eol == std::string_view::npos ? std::string_view{} : answer.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto tab = line.find('\t');
    if (tab == std::string_view::npos) continue;
    result.emplace(std::string(line.substr(0, tab)), std::string(line.substr(tab + 1)));
  }
  return result;
}

}  // namespace zkr::testing
