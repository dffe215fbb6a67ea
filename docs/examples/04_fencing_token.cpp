// 04: a resource that checks fencing tokens. A holder whose lock was lost without it noticing (a long GC
// pause, a partition) can still try to write; the resource rejects any token older than the newest it has
// seen. State kept in ZooKeeper itself is fenced by the transaction instead: `multi_while_held`.
//
//   example_04_fencing_token 127.0.0.1:2181
#include <cstdio>
#include <mutex>
#include <zkr/zkrecipes.hpp>

/// The protected resource: accepts a write only with a token at least as new as the newest seen.
class FencedStore {
 public:
  bool write(std::int64_t token, const std::string& value) {
    std::lock_guard lk(mu_);
    if (token < newest_) return false;  // a late writer from an earlier grant
    newest_ = token;
    value_ = value;
    return true;
  }

 private:
  std::mutex mu_;
  std::int64_t newest_ = 0;
  std::string value_;
};

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  const std::string connect = argc > 1 ? argv[1] : "127.0.0.1:2181";
  auto retry = std::make_shared<zkr::RetryNTimes>(3, zkr::Millis(100));
  zkr::CuratorFramework slow_client(
      {.connect_string = connect, .retry_policy = retry, .session_timeout = 4s});
  zkr::CuratorFramework fast_client({.connect_string = connect, .retry_policy = retry});
  slow_client.start();
  fast_client.start();
  FencedStore store;

  zkr::InterProcessMutex slow(slow_client, "/examples/fenced");
  zkr::InterProcessMutex fast(fast_client, "/examples/fenced");
  slow.acquire();
  std::int64_t old_token = slow.fencing_token();
  std::printf("slow holder: token %lld\n", static_cast<long long>(old_token));

  slow_client.inject_session_expiration();  // its session dies while it "pauses"
  fast.acquire();
  std::int64_t new_token = fast.fencing_token();
  std::printf("new holder:  token %lld\n", static_cast<long long>(new_token));
  bool new_ok = store.write(new_token, "from the new holder");
  bool late_ok = store.write(old_token, "late write from the old holder");
  std::printf("new holder's write %s; old holder's late write %s\n", new_ok ? "accepted" : "rejected",
              late_ok ? "accepted (wrong!)" : "rejected");

  // State kept in ZooKeeper itself needs no token: multi_while_held commits its writes only while the
  // holder's lock node exists (a check in the same transaction).
  zkr::error_code ec;
  fast_client.create("/examples/fenced-config", {.creating_parents = true, .data = std::string("v1")}, ec);
  fast.lease()->multi_while_held({zkr::Op::set_data("/examples/fenced-config", "from the new holder")}, ec);
  const bool fenced_ok = !ec;
  slow.lease()->multi_while_held({zkr::Op::set_data("/examples/fenced-config", "late")}, ec);
  const bool fenced_late_refused = ec == zkr::client_errc::lock_lost;
  std::printf("in ZooKeeper: new holder's transaction %s; old holder's %s\n",
              fenced_ok ? "committed" : "failed",
              fenced_late_refused ? "refused (lock_lost)" : "not refused (wrong!)");
  fast.release();
  slow.release(ec);  // its node went with its session; release just forgets the hold
  return new_ok && !late_ok && new_token > old_token && fenced_ok && fenced_late_refused ? 0 : 1;
}
