// PersistentNode::Impl, ending the node (I/O thread): stop what is under way, then delete the node, also
// one a create in flight at the close makes after all (CURATOR-297).

#include "persistent_node_impl.hpp"

namespace zkr {

bool PersistentNode::Impl::mark_closed() {
  {
    std::lock_guard lk(mu);
    if (state == State::closed) return false;
    state = State::closed;
    listeners.close();
  }
  cv.notify_all();
  return true;
}

void PersistentNode::Impl::shutdown(detail::VoidCallback done) {
  if (done) close_waiters.push_back(std::move(done));
  const Step was = step;
  step = Step::closing;
  if (state_listener) core->remove_state_listener(state_listener);
  state_listener = 0;
  if (retry_timer) retry_timer->cancel();
  drop_watch();
  wake_initial_waiters(client_errc::closed);
  complete_all_data_waiters(client_errc::closed);
  switch (was) {
    case Step::creating:
      // No further try; the reply of a try already sent comes to close_after_create.
      if (create_stop) create_stop->request();
      return;
    case Step::adopting:
      return delete_then_finish(adopting_path);  // the adopt's write, when it answers, is ignored
    case Step::idle:
      return finish_close({});
    default: {
      std::string path;
      {
        std::lock_guard lk(mu);
        path = actual_path;
      }
      if (path.empty()) return finish_close({});
      return delete_then_finish(std::move(path));
    }
  }
}

void PersistentNode::Impl::close_after_create(const std::string& tried, error_code ec,
                                              const CreateResult& r) {
  if (!ec) return delete_then_finish(r.path);
  // A name known in advance (a re-creation, or a plain non-sequential path): the node may be there, made by
  // a try whose reply was lost, or made by someone else and about to be adopted (Curator's close deletes an
  // adopted node too). A protected name the core sweeps up itself; an unprotected sequential one cannot be
  // found (docs/nodes.md).
  const bool exact = tried != base_path || (!use_protection && !is_sequential(mode));
  if (exact && (ec == zk_errc::node_exists || is_transient_node_failure(ec) ||
                ec == boost::asio::error::operation_aborted))
    return delete_then_finish(tried);
  finish_close({});
}

void PersistentNode::Impl::delete_then_finish(std::string path) {
  if (!hooks.delete_on_close) return finish_close({});
  detail::remove_nodes(*core, {std::move(path)}, [self = shared_from_this()](error_code ec) {
    // A connection failure leaves the delete to the client's guaranteed-delete machinery: done here.
    self->finish_close(is_transient_node_failure(ec) ? error_code{} : ec);
  });
}

void PersistentNode::Impl::finish_close(error_code ec) {
  step = Step::closed;
  create_stop.reset();
  auto waiters = std::exchange(close_waiters, {});
  for (auto& w : waiters) w(ec);
}

}  // namespace zkr
