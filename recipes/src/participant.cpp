#include <zkr/framework/detail/async.hpp>
#include <zkr/recipes/detail/lock_internals.hpp>
#include <zkr/recipes/participant.hpp>

namespace zkr::detail {

namespace {

/// Reads the nodes one after the other, as Curator does (N+1 requests, no snapshot).
struct ParticipantReader : std::enable_shared_from_this<ParticipantReader> {
  std::shared_ptr<Core> core;
  std::vector<std::string> nodes;
  std::size_t next_index = 0;
  std::vector<Participant> result;
  unique_function<void(error_code, std::vector<Participant>)> done;

  void next() {
    if (next_index == nodes.size()) return done({}, std::move(result));
    auto path = nodes[next_index++];
    core->get_data(std::move(path), nullptr, [self = shared_from_this()](error_code ec, NodeData d) {
      if (ec == zk_errc::no_node) return self->next();  // gone since the listing (CURATOR-358)
      if (ec) return self->done(ec, {});
      self->result.push_back(Participant{std::move(d.data), self->result.empty()});
      self->next();
    });
  }
};

}  // namespace

void read_participants(const std::shared_ptr<detail::LockInternals>& engine,
                       unique_function<void(error_code, std::vector<Participant>)> done) {
  engine->participant_nodes(
      [core = engine->core(), done = std::move(done)](error_code ec, std::vector<std::string> nodes) mutable {
        if (ec) return done(ec, {});
        auto r = std::make_shared<ParticipantReader>();
        r->core = std::move(core);
        r->nodes = std::move(nodes);
        r->done = std::move(done);
        r->next();
      });
}

std::vector<Participant> read_participants_blocking(const std::shared_ptr<detail::LockInternals>& engine,
                                                    error_code& ec) {
  return run_blocking<std::vector<Participant>>(
      *engine->core(),
      [engine](unique_function<void(error_code, std::vector<Participant>)> cb) {
        read_participants(engine, std::move(cb));
      },
      ec);
}

Participant leader_of(const std::vector<Participant>& participants) {
  return participants.empty() ? Participant{} : participants.front();
}

}  // namespace zkr::detail
