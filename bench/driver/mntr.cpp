#include "mntr.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace zkr_bench {

std::optional<MntrSample> read_mntr(const std::string& address, std::string& error) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    error = "bad --mntr address " + address;
    return std::nullopt;
  }
  std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    error = std::string("getaddrinfo: ") + ::gai_strerror(rc);
    return std::nullopt;
  }
  int fd = -1;
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0) continue;
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) break;
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(res);
  if (fd < 0) {
    error = "cannot connect to " + address + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::string data;
  if (::send(fd, "mntr", 4, MSG_NOSIGNAL) != 4) {
    error = std::string("send: ") + std::strerror(errno);
    ::close(fd);
    return std::nullopt;
  }
  char buf[8192];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buf, std::size_t(n));
  }
  ::close(fd);
  MntrSample out;
  std::istringstream lines(data);
  std::string line;
  while (std::getline(lines, line)) {
    auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    char* end = nullptr;
    std::string value = line.substr(tab + 1);
    double d = std::strtod(value.c_str(), &end);
    if (end != value.c_str()) out[line.substr(0, tab)] = d;
  }
  if (out.empty()) {
    error = "empty mntr answer from " + address;
    return std::nullopt;
  }
  return out;
}

std::optional<MntrSample> MntrWindow::sample() {
  if (!enabled()) return std::nullopt;
  return read_mntr(address_, error_);
}

double MntrWindow::value(const char* key) {
  std::string error;
  auto m = read_mntr(address_, error);
  if (!m) return -1;
  auto it = m->find(key);
  return it == m->end() ? -1 : it->second;
}

void MntrWindow::set_sums(const MntrSample& sums) {
  before_.emplace();
  for (const auto& [k, v] : sums) (*before_)[k] = 0;
  after_ = sums;
}

void MntrWindow::note_missing() {
  if (error_.empty()) error_ = "no mntr sample";
}

Json MntrWindow::delta() const {
  if (!before_ || !after_) return JsonObject{{"error", error_.empty() ? "no mntr sample" : error_}};
  auto d = [&](const char* k) -> long {
    auto a = before_->find(k), b = after_->find(k);
    return a == before_->end() || b == after_->end() ? 0 : std::lround(b->second - a->second);
  };
  return JsonObject{
      {"reads", d("zk_cnt_readlatency")},
      {"writes", d("zk_cnt_updatelatency")},
      {"watch_events", d("zk_sum_node_created_watch_count") + d("zk_sum_node_deleted_watch_count") +
                           d("zk_sum_node_changed_watch_count") + d("zk_sum_node_children_watch_count")},
      {"packets_received", d("zk_packets_received")}};
}

}  // namespace zkr_bench
