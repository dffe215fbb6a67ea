// zkr_soak: randomized contention with random faults, judged by the independent grant checker.
//
//   zkr_soak [--seconds N] [--sessions S] [--threads T] [--locks L] [--seed X] [--mixed]
//
// S client sessions with T threads each contend on L InterProcessMutex paths (sessions with an odd index use
// StandardLockDriver, the others the default PrewatchLockDriver, so both share every queue; each iteration
// picks a lock at random and holds it 0-20 ms, writing to the checker's fenced resource), while a fault
// thread, every 1-3 s, either restarts the ZooKeeper server (down for well under the session timeout) or
// expires the session of a random client. Grants of an expired session count as lost from the moment of the
// fault (the fence, not the lock, protects a holder that has not noticed yet). At the end every client is
// closed and no lock node may be left. Prints the checker's totals; exits 0 only with 0 violations and a
// clean tree.
//
// --mixed: each iteration picks one of four ways to take the locks, all on the same paths and so excluding
// each other: the blocking acquire; the mutex's async_try_acquire_for (sometimes with a timeout of a few
// milliseconds, so that timed-out attempts delete their nodes under faults too), its lease released, dropped
// or released asynchronously; the paths-form InterProcessMultiLock over two locks (asynchronous, batched);
// and the locks-form multi-lock over this session's two mutex objects (lock by lock, asynchronous or
// blocking, half the time each). Locks
// are always taken in ascending path order, as a program must to avoid deadlocks. A fifth way takes one of
// L semaphore mutexes (their own paths), blocking or asynchronously.
//
// A watchdog ends a run that has not finished two minutes after its faults stopped: it prints what each
// worker thread and the main thread were doing (and since when), then aborts, so that a hang names its place.

#include <atomic>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../integration/checker.hpp"
#include "../integration/fixture.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

struct Options {
  int seconds = 10;
  int sessions = 3;
  int threads = 2;
  int locks = 2;
  unsigned seed = std::random_device{}();
  bool mixed = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> long {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "zkr_soak: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return std::strtol(argv[++i], nullptr, 10);
    };
    if (a == "--seconds")
      o.seconds = static_cast<int>(next());
    else if (a == "--sessions")
      o.sessions = static_cast<int>(next());
    else if (a == "--threads")
      o.threads = static_cast<int>(next());
    else if (a == "--locks")
      o.locks = static_cast<int>(next());
    else if (a == "--seed")
      o.seed = static_cast<unsigned>(next());
    else if (a == "--mixed")
      o.mixed = true;
    else {
      std::fprintf(
          stderr,
          "usage: zkr_soak [--seconds N] [--sessions S] [--threads T] [--locks L] [--seed X] [--mixed]\n");
      std::exit(2);
    }
  }
  return o;
}

ClientOptions soak_client_options() {
  ClientOptions c;
  c.session_timeout = 8s;
  c.connection_timeout = 4s;
  c.retry = std::make_shared<BoundedExponentialBackoffRetry>(Millis(100), Millis(1000), 20);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const auto opt = parse(argc, argv);
  std::printf("zkr_soak: %d s, %d sessions x %d threads on %d locks, seed %u%s\n", opt.seconds, opt.sessions,
              opt.threads, opt.locks, opt.seed, opt.mixed ? ", mixed recipes" : "");
  std::fflush(stdout);

  zkr::testing::TestingServer server;
  const auto connect = server.connect_string();
  GrantChecker checker;
  std::vector<std::unique_ptr<CuratorFramework>> clients;
  for (int i = 0; i < opt.sessions; ++i) clients.push_back(make_client(connect, soak_client_options()));
  std::vector<std::string> paths, sem_paths;
  for (int l = 0; l < opt.locks; ++l) paths.push_back("/soak/lock-" + std::to_string(l));
  for (int l = 0; l < opt.locks && opt.mixed; ++l) sem_paths.push_back("/soak/sem-" + std::to_string(l));
  // One mutex object per (session, lock), shared by that session's threads (holds belong to threads). Odd
  // sessions wait without the pre-watch (the standard driver): both drivers share every queue.
  std::vector<std::vector<std::unique_ptr<InterProcessMutex>>> mutexes(opt.sessions);
  const auto standard = std::make_shared<StandardLockDriver>();
  for (int s = 0; s < opt.sessions; ++s)
    for (auto& p : paths)
      mutexes[s].push_back(s % 2 ? std::make_unique<InterProcessMutex>(*clients[s], p, standard)
                                 : std::make_unique<InterProcessMutex>(*clients[s], p));
  // --mixed: one semaphore mutex object per (session, semaphore path), shared by that session's threads (a
  // blocking hold belongs to the object: one thread of the session takes it blocking at a time, guarded
  // here).
  struct SessionSem {
    std::unique_ptr<InterProcessSemaphoreMutex> sem;
    std::mutex blocking;
  };
  std::vector<std::vector<std::unique_ptr<SessionSem>>> sems(opt.sessions);
  for (int s = 0; s < opt.sessions; ++s)
    for (auto& p : sem_paths) {
      sems[s].push_back(std::make_unique<SessionSem>());
      sems[s].back()->sem = std::make_unique<InterProcessSemaphoreMutex>(*clients[s], p);
    }

  std::mutex side_mu;
  std::map<std::size_t, std::int64_t> grant_session;  // grant id -> session of its node
  std::vector<std::pair<std::int64_t, GrantChecker::Clock::time_point>> expired;  // session, when
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> errors{0}, timeouts{0}, fence_rejects{0};
  std::atomic<long> longest_ms{0};

  // What each worker (and, last, the main thread) is doing, for the watchdog: a literal and when it began.
  struct Stage {
    std::atomic<const char*> what{"starting"};
    std::atomic<std::int64_t> since_ms{0};
    void at(const char* w) {
      since_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now().time_since_epoch())
                     .count();
      what = w;
    }
  };
  std::vector<Stage> stages(static_cast<std::size_t>(opt.sessions * opt.threads) + 1);
  Stage& main_stage = stages.back();
  std::mutex done_mu;
  std::condition_variable done_cv;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock lk(done_mu);
    if (done_cv.wait_for(lk, std::chrono::seconds(opt.seconds) + 120s, [&] { return done; })) return;
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now().time_since_epoch())
                         .count();
    std::printf("zkr_soak: WATCHDOG: not finished %d s after the start; what each thread is doing:\n",
                opt.seconds + 120);
    for (std::size_t i = 0; i < stages.size(); ++i)
      std::printf("  %s: %s, for %lld ms\n",
                  i + 1 == stages.size() ? "main" : ("worker " + std::to_string(i)).c_str(),
                  stages[i].what.load(), static_cast<long long>(now - stages[i].since_ms.load()));
    std::fflush(stdout);
    std::abort();
  });

  std::vector<std::thread> workers;
  for (int s = 0; s < opt.sessions; ++s)
    for (int t = 0; t < opt.threads; ++t)
      workers.emplace_back([&, s, t] {
        Stage& stage = stages[static_cast<std::size_t>(s * opt.threads + t)];
        std::mt19937 rng(opt.seed * 31u + static_cast<unsigned>(s * 101 + t));
        const std::string name = "s" + std::to_string(s) + "t" + std::to_string(t);
        std::string how;  // the way of the current acquire, in the checker's holder names
        // Records the grants of one acquire with the checker, holds them 0-20 ms with fenced writes, ends
        // them.
        auto hold = [&](const std::vector<std::pair<std::string, const Lease*>>& grants) {
          std::vector<std::size_t> ids;
          for (const auto& [path, lease] : grants) {
            const std::string holder =
                name + "/" + how + (lease->status() == LeaseStatus::lost ? "(lost)" : "");
            const auto id =
                checker.begin(path, holder, GrantChecker::Kind::exclusive, lease->fencing_token());
            {
              std::lock_guard lk(side_mu);
              grant_session[id] = lease->session_id();
            }
            if (!checker.fenced_write(path, lease->fencing_token())) ++fence_rejects;
            ids.push_back(id);
          }
          stage.at("holding");
          std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 21));
          for (std::size_t i = 0; i < grants.size(); ++i) {
            const auto& [path, lease] = grants[i];
            if (lease->status() == LeaseStatus::lost)
              checker.mark_lost(ids[i]);
            else if (!checker.fenced_write(path, lease->fencing_token()))
              ++fence_rejects;
            checker.end(ids[i]);
          }
        };
        auto timed = [&](auto&& acquire) {
          const auto t0 = std::chrono::steady_clock::now();
          acquire();
          const long took = static_cast<long>(
              std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
                  .count());
          for (auto cur = longest_ms.load(); took > cur && !longest_ms.compare_exchange_weak(cur, took);) {
          }
        };
        while (!stop) {
          const auto l = rng() % paths.size();
          auto& m = *mutexes[s][l];
          int mode = 0;
          if (opt.mixed) {
            mode = static_cast<int>(rng() % 5);
            if (paths.size() < 2 && (mode == 2 || mode == 3)) mode = 0;
          }
          how = mode == 0   ? "blocking"
                : mode == 1 ? "async"
                : mode == 2 ? "multi-paths"
                : mode == 3 ? "multi-locks"
                            : "semaphore";
          // Two distinct locks in ascending order, for the multi-locks.
          auto a = rng() % paths.size(), b = rng() % paths.size();
          if (a == b) b = (a + 1) % paths.size();
          if (a > b) std::swap(a, b);
          static constexpr const char* acquiring[] = {"blocking: acquire", "async: acquire",
                                                      "multi-paths: acquire", "multi-locks: acquire",
                                                      "semaphore: acquire"};
          stage.at(acquiring[mode]);
          try {
            if (mode == 0) {
              error_code ec;
              bool got = false;
              timed([&] { got = m.acquire(3s, ec); });
              if (ec) throw boost::system::system_error(ec);
              if (!got) {
                ++timeouts;
                continue;
              }
              hold({{paths[l], m.lease()}});
              stage.at("blocking: release");
              m.release(ec);
            } else if (mode == 1) {
              const auto wait = rng() % 4 == 0 ? std::chrono::milliseconds(rng() % 10) : 3000ms;
              Lease lease;
              timed([&] { lease = m.async_try_acquire_for(wait, boost::asio::use_future).get(); });
              if (!lease) {
                ++timeouts;
                continue;
              }
              hold({{paths[l], &lease}});
              stage.at("async: release");
              error_code ec;
              switch (rng() % 3) {
                case 0:
                  lease.release(ec);
                  break;
                case 1:
                  lease = Lease();
                  break;  // dropped: the destructor gives it back
                default:
                  lease.async_release(boost::asio::use_future).get();
                  break;
              }
            } else if (mode == 4) {
              auto& ss = *sems[s][l];
              Lease lease;
              if (rng() % 2 == 0) {
                timed([&] { lease = ss.sem->async_try_acquire_for(3s, boost::asio::use_future).get(); });
              } else {
                // A blocking hold belongs to the object: one thread of the session at a time takes it here.
                std::lock_guard lk(ss.blocking);
                error_code ec;
                bool got = false;
                timed([&] { got = ss.sem->acquire(3s, ec); });
                if (ec) throw boost::system::system_error(ec);
                if (!got) {
                  ++timeouts;
                  continue;
                }
                hold({{sem_paths[l], ss.sem->lease()}});
                stage.at("semaphore: release");
                ss.sem->release(ec);
                continue;
              }
              if (!lease) {
                ++timeouts;
                continue;
              }
              hold({{sem_paths[l], &lease}});
              stage.at("semaphore: release");
              error_code ec;
              lease.release(ec);
            } else if (mode == 3 && rng() % 2 == 0) {
              // The locks form, blocking: the grants are the two mutexes' own holds of this thread (the
              // blocking hold_lost path: a hold lost while the later lock was awaited is taken again).
              InterProcessMultiLock multi(
                  std::vector<std::reference_wrapper<InterProcessLock>>{*mutexes[s][a], *mutexes[s][b]});
              error_code ec;
              bool got = false;
              timed([&] { got = multi.acquire(3s, ec); });
              if (ec) throw boost::system::system_error(ec);
              if (!got) {
                ++timeouts;
                continue;
              }
              hold({{paths[a], mutexes[s][a]->lease()}, {paths[b], mutexes[s][b]->lease()}});
              stage.at("multi-locks: release");
              multi.release(ec);
            } else {
              std::optional<InterProcessMultiLock> multi;
              if (mode == 2)
                multi.emplace(*clients[s], std::vector<std::string>{paths[a], paths[b]});
              else
                multi.emplace(
                    std::vector<std::reference_wrapper<InterProcessLock>>{*mutexes[s][a], *mutexes[s][b]});
              MultiLease grant;
              timed([&] { grant = multi->async_try_acquire_for(3s, boost::asio::use_future).get(); });
              if (!grant) {
                ++timeouts;
                continue;
              }
              std::vector<std::pair<std::string, const Lease*>> grants;
              const auto& mine =
                  multi->paths().empty() ? std::vector<std::string>{paths[a], paths[b]} : multi->paths();
              for (std::size_t i = 0; i < grant.size(); ++i)
                grants.emplace_back(mine.at(i), &grant.leases()[i]);
              hold(grants);
              stage.at("multi: release");
              error_code ec;
              grant.release(ec);
            }
          } catch (const std::exception&) {
            stage.at("after an error");
            ++errors;
            std::this_thread::sleep_for(50ms);
          }
        }
        stage.at("stopped");
      });

  main_stage.at("faults");
  std::thread faults([&] {
    std::mt19937 rng(opt.seed);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(opt.seconds);
    while (std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1000 + rng() % 2000));
      if (std::chrono::steady_clock::now() >= end) break;
      if (rng() % 2 == 0) {
        checker.fault("server restart");
        server.restart();
      } else {
        const auto s = rng() % clients.size();
        const auto sid = clients[s]->session_id();
        checker.fault("expire session of client " + std::to_string(s));
        {
          std::lock_guard lk(side_mu);
          expired.emplace_back(sid, GrantChecker::Clock::now());
        }
        try {
          clients[s]->inject_session_expiration();
        } catch (const std::exception& e) {
          std::printf("zkr_soak: inject_session_expiration failed: %s\n", e.what());
        }
      }
    }
  });
  faults.join();
  stop = true;
  main_stage.at("joining the workers");
  for (auto& w : workers) w.join();
  main_stage.at("destroying the lock objects");
  mutexes.clear();
  sems.clear();
  main_stage.at("closing the clients");
  for (auto& c : clients) c->close();
  main_stage.at("checking that no node is left");

  // Grants whose session was expired by a fault count as lost from the fault on.
  for (auto& [sid, at] : expired)
    for (auto& [id, gsid] : grant_session)
      if (gsid == sid && sid != 0) checker.mark_lost(id, at);

  auto fresh = make_client(connect, soak_client_options());
  std::vector<std::string> left;
  const bool clean = eventually(
      [&] {
        left.clear();
        std::vector<std::string> dirs = paths;
        for (auto& p : sem_paths) {
          dirs.push_back(p + "/leases");
          dirs.push_back(p + "/locks");
        }
        for (auto& p : dirs) {
          error_code ec;
          auto kids = fresh->get_children(p, {}, ec);
          for (auto& k : kids) left.push_back(p + "/" + k);
        }
        return left.empty();
      },
      20s);
  for (auto& n : left) std::printf("zkr_soak: left behind: %s\n", n.c_str());

  {
    std::lock_guard lk(done_mu);
    done = true;
  }
  done_cv.notify_all();
  watchdog.join();

  std::printf(
      "zkr_soak: %zu acquire errors, %zu timeouts, %zu fenced writes rejected, longest acquire call %ld ms\n",
      errors.load(), timeouts.load(), fence_rejects.load(), longest_ms.load());
  const auto v = checker.report("zkr_soak:");
  return v.empty() && clean ? 0 : 1;
}
