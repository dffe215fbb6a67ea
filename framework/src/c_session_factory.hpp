#pragma once
// The session over the ZooKeeper C client flavour this build links (st_session.cpp or mt_session.cpp).

#include <spdlog/logger.h>

#include <memory>

#include "session.hpp"

namespace zkr::detail {

std::unique_ptr<Session> make_c_client_session(boost::asio::io_context& ioc, const ClientConfig& config,
                                               spdlog::logger& log, SessionEvents& events);

}  // namespace zkr::detail
