#!/usr/bin/env python3
"""kazoo_bench: the kazoo (Python) driver of zkrecipes' lock benchmarks.

Same command line and output as bench/java/CuratorBench.java and the C++ ``zkr_bench``, so that
bench/run_bench.py drives all three the same way::

    kazoo_bench.py --connect HOSTS --scenario S --path P [--clients K] [--ops N] [--waiters W]
                   [--warmup N] [--session-timeout-ms MS] [--timeout-s S] [--mntr HOST:PORT]

Scenarios (defaults in brackets), with kazoo's nearest recipe for each Curator one:

* ``uncontended``: one session, N [2000] ``Lock`` acquire+release pairs; latency per pair.
* ``contended``: K [8] sessions, one thread each, looping acquire/release on P until N [2000]
  handoffs are done in total; latency = acquire latency.
* ``drain``: one holder holds P; W [200] waiters (threads spread over K [min(8, W)] sessions, one
  ``Lock`` each) queue up; once W nodes wait, the holder releases and every waiter acquires and
  releases once. ops = W handoffs; latency = time between consecutive acquisitions;
  fifo_ok = acquisition order equals sequence-number order.
* ``semaphore-mutex``: ``Semaphore(max_leases=1)`` (kazoo has no InterProcessSemaphoreMutex), N [1000]
  pairs.
* ``rwlock``: 4 reader sessions (``ReadLock``) + 1 writer session (``WriteLock``) looping for N [5000]
  milliseconds. kazoo 2.8.0's ReadLock deadlocks against a looping writer (kazoo issue 649), so the
  readers use ``FixedReadLock`` (kazoo_support.py) unless --stock-readlock is given. Every acquire also has a
  timeout, so nothing hangs; extra.timeouts counts them.
* ``multilock``: kazoo has no multi-lock; emulated like Curator's InterProcessMultiLock: ``Lock`` on
  P/0 .. P/K-1 [K=4] acquired in order, released in reverse order. N [500] pairs.
* ``cache-populate``, ``cache-init``, ``cache-events`` (issue 39): kazoo's ``TreeCache`` (--recipe tree; kazoo
  has no CuratorCache) over a tree of N (--nodes) leaves: see kazoo_cache.py.

--warmup: unmeasured pairs/handoffs before the measured part [100; drain 0]; for rwlock,
milliseconds of unmeasured running [500].

Output: exactly one JSON line on stdout with the keys library ("kazoo"), scenario, params, ops,
seconds, ops_per_sec, p50_us, p99_us, cpu_seconds (user+sys CPU time of this process during the
measured part, from time.process_time(); extra.cpu_seconds_total is the whole process), fifo_ok (drain
only, else null) and extra. With --mntr, extra.mntr holds the differences of ZooKeeper's counters
read just before and after the measured part: reads (zk_cnt_readlatency), writes
(zk_cnt_updatelatency), watch_events (sum of zk_sum_node_*_watch_count) and packets_received.
extra.sessions and extra.total_ops let the runner estimate them from whole-run counters instead. Exit status: 0 ok; 1 the run failed; 2 usage or unsupported scenario;
3 the --timeout-s watchdog [600] fired.
"""

import argparse
import json
import os
import sys
import threading
import time

try:
    import kazoo
    from kazoo.client import KazooClient
    from kazoo.exceptions import LockTimeout, NoNodeError
    from kazoo.recipe.lock import Lock, ReadLock, Semaphore, WriteLock
    from kazoo_support import WATCH_KEYS, FixedReadLock, cpu_seconds, percentile_us, read_mntr
    import kazoo_cache
except ImportError:  # pragma: no cover - depends on the machine
    sys.stderr.write("kazoo_bench: cannot import kazoo with %s (Debian: python3-kazoo, "
                     "run with /usr/bin/python3)\n" % sys.executable)
    sys.exit(2)

SCENARIOS = ("uncontended", "contended", "drain", "semaphore-mutex", "rwlock", "multilock", "cache-populate",
             "cache-init", "cache-events")


class Bench:
    def __init__(self, args):
        self.a = args
        self.sessions = []
        self.sessions_lock = threading.Lock()
        self.mntr = [None, None]
        self.mntr_error = None

    # -- ZooKeeper's counters around the measured part (--mntr HOST:PORT) -------------------

    def _sample(self):
        if not self.a.mntr:
            return None
        try:
            return read_mntr(self.a.mntr)
        except (OSError, ValueError) as e:
            self.mntr_error = repr(e)
            return None

    def mark_start(self):
        self.mntr[0] = self._sample()

    def mark_end(self):
        self.mntr[1] = self._sample()

    def mntr_value(self, key):
        """One counter now; -1 when it cannot be read or without --mntr."""
        m = self._sample()
        return m.get(key, -1) if m else -1

    def mntr_delta(self):
        a, b = self.mntr
        if a is None or b is None:
            return {"error": self.mntr_error or "no mntr sample"}

        def d(k):
            return int(round(b.get(k, 0) - a.get(k, 0)))

        return {"reads": d("zk_cnt_readlatency"), "writes": d("zk_cnt_updatelatency"),
                "watch_events": sum(d(k) for k in WATCH_KEYS),
                "packets_received": d("zk_packets_received")}

    # -- sessions --------------------------------------------------------------------------

    def new_session(self):
        c = KazooClient(hosts=self.a.connect, timeout=self.a.session_timeout_ms / 1000.0)
        with self.sessions_lock:
            self.sessions.append(c)
        c.start(timeout=20)
        return c

    def close_sessions(self):
        with self.sessions_lock:
            for c in self.sessions:
                try:
                    c.stop()
                    c.close()
                except Exception:  # the server expires what we could not close
                    pass

    def deadline(self):
        return time.monotonic() + max(1, self.a.timeout_s - 5)

    def opt(self, name, default):
        v = getattr(self.a, name)
        return default if v is None or v < 0 else v

    # -- helpers ---------------------------------------------------------------------------

    @staticmethod
    def run_threads(n, name, body):
        """Starts n daemon threads running body(i); returns (threads, failures)."""
        failures = []
        threads = []

        def wrap(i):
            try:
                body(i)
            except BaseException as e:  # noqa: B902 - report anything
                failures.append(e)

        for i in range(n):
            t = threading.Thread(target=wrap, args=(i,), name="%s-%d" % (name, i), daemon=True)
            threads.append(t)
            t.start()
        return threads, failures

    @staticmethod
    def join_all(threads, failures, deadline):
        for t in threads:
            t.join(max(0.001, deadline - time.monotonic()))
            if t.is_alive():
                raise RuntimeError("thread %s did not finish in time" % t.name)
        if failures:
            raise RuntimeError("worker failed: %r" % (failures[0],))

    def pairs(self, acquire, release, n, warm):
        for _ in range(warm):
            acquire()
            release()
        lat = []
        self.mark_start()
        cpu0 = cpu_seconds()
        t0 = time.perf_counter_ns()
        for _ in range(n):
            s = time.perf_counter_ns()
            acquire()
            release()
            lat.append(time.perf_counter_ns() - s)
        t1 = time.perf_counter_ns()
        self.mark_end()
        cpu1 = cpu_seconds()
        lat.sort()
        return dict(ops=n, seconds=(t1 - t0) / 1e9, lat=lat, cpu=cpu1 - cpu0, fifo_ok=None,
                    extra={"sessions": 1, "total_ops": n + warm})

    # -- scenarios -------------------------------------------------------------------------

    def uncontended(self):
        lock = Lock(self.new_session(), self.a.path)
        return self.pairs(lock.acquire, lock.release, self.opt("ops", 2000), self.opt("warmup", 100))

    def semaphore_mutex(self):
        sem = Semaphore(self.new_session(), self.a.path, max_leases=1)
        r = self.pairs(sem.acquire, sem.release, self.opt("ops", 1000), self.opt("warmup", 100))
        r["extra"]["recipe"] = "kazoo Semaphore(max_leases=1)"
        return r

    def multilock(self):
        k = max(1, self.opt("clients", 4))
        c = self.new_session()
        locks = [Lock(c, "%s/%d" % (self.a.path, i)) for i in range(k)]

        def acquire():
            taken = []
            try:
                for lk in locks:
                    lk.acquire()
                    taken.append(lk)
            except BaseException:
                for lk in reversed(taken):
                    lk.release()
                raise

        def release():
            for lk in reversed(locks):
                lk.release()

        r = self.pairs(acquire, release, self.opt("ops", 500), self.opt("warmup", 100))
        r["extra"]["locks"] = k
        r["extra"]["recipe"] = "emulated: Lock per path, in order"
        return r

    def contended(self):
        k = max(1, self.opt("clients", 8))
        n = self.opt("ops", 2000)
        warm = self.opt("warmup", 100)
        locks = [Lock(self.new_session(), self.a.path) for _ in range(k)]
        lats = [[] for _ in range(k)]
        tickets = {"warm": warm, "run": n}
        tickets_lock = threading.Lock()
        warm_done = threading.Semaphore(0)
        go = threading.Event()

        def take(kind):
            with tickets_lock:
                if tickets[kind] <= 0:
                    return False
                tickets[kind] -= 1
                return True

        def body(i):
            lk, lat = locks[i], lats[i]
            while take("warm"):
                lk.acquire()
                lk.release()
            warm_done.release()
            go.wait()
            while take("run"):
                s = time.perf_counter_ns()
                lk.acquire()
                lat.append(time.perf_counter_ns() - s)
                lk.release()

        threads, failures = self.run_threads(k, "contender", body)
        deadline = self.deadline()
        for _ in range(k):
            while not warm_done.acquire(timeout=0.1):
                if failures:
                    raise RuntimeError("worker failed: %r" % (failures[0],))
                if time.monotonic() > deadline:
                    raise RuntimeError("warmup did not finish in time")
        self.mark_start()
        cpu0 = cpu_seconds()
        t0 = time.perf_counter_ns()
        go.set()
        self.join_all(threads, failures, deadline)
        t1 = time.perf_counter_ns()
        self.mark_end()
        cpu1 = cpu_seconds()
        lat = sorted(x for per in lats for x in per)
        return dict(ops=n, seconds=(t1 - t0) / 1e9, lat=lat, cpu=cpu1 - cpu0, fifo_ok=None,
                    extra={"sessions": k, "total_ops": n + warm})

    def drain(self):
        w = max(1, self.opt("waiters", 200))
        k = max(1, min(w, self.opt("clients", 8)))
        holder_session = self.new_session()
        cs = [self.new_session() for _ in range(k)]
        holder = Lock(holder_session, self.a.path)
        holder.acquire()

        order_lock = threading.Lock()
        acquired = []  # (monotonic ns, sequence number) in acquisition order

        def body(i):
            lk = Lock(cs[i % k], self.a.path)
            lk.acquire()
            with order_lock:  # exact order: we hold the ZooKeeper lock here
                acquired.append((time.perf_counter_ns(), int(lk.node[-10:])))
            lk.release()

        old_stack = threading.stack_size()
        threading.stack_size(512 * 1024)
        try:
            threads, failures = self.run_threads(w, "waiter", body)
        finally:
            threading.stack_size(old_stack)
        deadline = self.deadline()
        while True:
            if failures:
                raise RuntimeError("worker failed: %r" % (failures[0],))
            try:
                have = len(holder_session.get_children(self.a.path))
            except NoNodeError:
                have = 0
            if have >= w + 1:
                break
            if time.monotonic() > deadline:
                raise RuntimeError("only %d of %d nodes queued in time" % (have, w + 1))
            time.sleep(0.005)
        self.mark_start()
        cpu0 = cpu_seconds()
        t0 = time.perf_counter_ns()
        holder.release()
        self.join_all(threads, failures, deadline)
        t1 = time.perf_counter_ns()
        self.mark_end()
        cpu1 = cpu_seconds()
        gaps = []
        prev = t0
        for at, _ in acquired:
            gaps.append(at - prev)
            prev = at
        seqs = [s for _, s in acquired]
        fifo = len(seqs) == w and all(b > a for a, b in zip(seqs, seqs[1:]))
        return dict(ops=w, seconds=(t1 - t0) / 1e9, lat=sorted(gaps), cpu=cpu1 - cpu0, fifo_ok=fifo,
                    extra={"sessions": k + 1, "waiters": w, "total_ops": w + 1})

    def rwlock(self):
        readers = 4
        duration_ms = self.opt("ops", 5000)
        warm_ms = self.opt("warmup", 500)
        read_lock = ReadLock if self.a.stock_readlock else FixedReadLock
        locks = [read_lock(self.new_session(), self.a.path) for _ in range(readers)]
        locks.append(WriteLock(self.new_session(), self.a.path))
        state = {"measuring": False, "stop": False}
        lats = [[] for _ in locks]
        warm_ops = [0] * len(locks)
        timeouts = [0] * len(locks)
        end_at = [None]

        def body(i):
            lk, lat = locks[i], lats[i]
            while not state["stop"]:
                counted = state["measuring"]
                left = 2.0 if end_at[0] is None else end_at[0] - time.monotonic() + 0.5
                s = time.perf_counter_ns()
                try:
                    ok = lk.acquire(timeout=min(2.0, max(0.1, left)))
                except LockTimeout:
                    ok = False
                if not ok:
                    timeouts[i] += 1
                    continue
                lk.release()
                d = time.perf_counter_ns() - s
                if counted and not state["stop"]:
                    lat.append(d)
                else:
                    warm_ops[i] += 1

        threads, failures = self.run_threads(len(locks), "rw", body)
        time.sleep(warm_ms / 1000.0)
        if failures:
            raise RuntimeError("worker failed: %r" % (failures[0],))
        self.mark_start()
        cpu0 = cpu_seconds()
        t0 = time.perf_counter_ns()
        end_at[0] = time.monotonic() + duration_ms / 1000.0
        state["measuring"] = True
        time.sleep(duration_ms / 1000.0)
        state["stop"] = True
        t1 = time.perf_counter_ns()
        self.mark_end()
        cpu1 = cpu_seconds()
        self.join_all(threads, failures, time.monotonic() + 30)
        seconds = (t1 - t0) / 1e9
        read_lat = sorted(x for per in lats[:readers] for x in per)
        write_lat = sorted(lats[readers])
        all_lat = sorted(read_lat + write_lat)
        extra = {
            "sessions": readers + 1, "readers": readers, "writers": 1, "duration_ms": duration_ms,
            "reads": len(read_lat), "writes": len(write_lat),
            "reads_per_sec": len(read_lat) / seconds, "writes_per_sec": len(write_lat) / seconds,
            "read_p50_us": percentile_us(read_lat, 0.50), "read_p99_us": percentile_us(read_lat, 0.99),
            "write_p50_us": percentile_us(write_lat, 0.50),
            "write_p99_us": percentile_us(write_lat, 0.99),
            "timeouts": sum(timeouts), "total_ops": len(all_lat) + sum(warm_ops),
            "recipe": "ReadLock (stock)" if self.a.stock_readlock else "ReadLock + issue-649 fix",
        }
        return dict(ops=len(all_lat), seconds=seconds, lat=all_lat, cpu=cpu1 - cpu0, fifo_ok=None,
                    extra=extra)

    # -- main ------------------------------------------------------------------------------

    def run(self):
        fn = {
            "uncontended": self.uncontended, "contended": self.contended, "drain": self.drain,
            "semaphore-mutex": self.semaphore_mutex, "rwlock": self.rwlock,
            "multilock": self.multilock,
            "cache-populate": lambda: kazoo_cache.populate_scenario(self),
            "cache-init": lambda: kazoo_cache.init_scenario(self),
            "cache-events": lambda: kazoo_cache.events_scenario(self),
        }[self.a.scenario]
        try:
            r = fn()
        finally:
            self.close_sessions()
        extra = r["extra"]
        extra["cpu_seconds_total"] = round(cpu_seconds(), 3)
        if self.a.mntr:
            extra["mntr"] = self.mntr_delta()
        extra["kazoo_version"] = getattr(kazoo, "__version__", None) or _kazoo_version()
        extra["python_version"] = sys.version.split()[0]
        out = {
            "library": "kazoo",
            "scenario": self.a.scenario,
            "params": {"clients": self.a.clients, "ops": self.a.ops, "waiters": self.a.waiters,
                       "warmup": self.a.warmup, "path": self.a.path,
                       **({"nodes": self.a.nodes, "recipe": "tree"} if self.a.scenario.startswith("cache-") else {})},
            "ops": r["ops"],
            "seconds": round(r["seconds"], 6),
            "ops_per_sec": round(r["ops"] / r["seconds"], 3) if r["seconds"] > 0 else None,
            "p50_us": percentile_us(r["lat"], 0.50),
            "p99_us": percentile_us(r["lat"], 0.99),
            "cpu_seconds": round(r["cpu"], 3),
            "fifo_ok": r["fifo_ok"],
            "extra": {k: (round(v, 3) if isinstance(v, float) else v) for k, v in extra.items()},
        }
        sys.stdout.write(json.dumps(out, separators=(",", ":")) + "\n")
        sys.stdout.flush()


def _kazoo_version():
    try:
        from kazoo import version
        return version.__version__
    except Exception:
        return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--connect", required=True)
    p.add_argument("--scenario", required=True)
    p.add_argument("--path", required=True)
    p.add_argument("--clients", type=int)
    p.add_argument("--ops", type=int)
    p.add_argument("--waiters", type=int)
    p.add_argument("--warmup", type=int)
    p.add_argument("--nodes", type=int, help="cache-*: leaves of the cached tree [10000; cache-events 1000]")
    p.add_argument("--recipe", help="cache-*: tree (kazoo's TreeCache; it has no CuratorCache)")
    p.add_argument("--session-timeout-ms", type=int, default=30000)
    p.add_argument("--timeout-s", type=int, default=600)
    p.add_argument("--mntr", metavar="HOST:PORT",
                   help="read this server's mntr counters around the measured part (extra.mntr)")
    p.add_argument("--stock-readlock", action="store_true",
                   help="rwlock: use kazoo's own ReadLock (deadlocks in 2.8.0, see FixedReadLock)")
    a = p.parse_args(argv)
    if a.scenario not in SCENARIOS:
        sys.stderr.write("kazoo_bench: unsupported scenario %s\n" % a.scenario)
        return 2

    def watchdog():
        sys.stderr.write("kazoo_bench: timed out after %d s\n" % a.timeout_s)
        sys.stderr.flush()
        os._exit(3)

    timer = threading.Timer(a.timeout_s, watchdog)
    timer.daemon = True
    timer.start()
    try:
        Bench(a).run()
    except Exception as e:
        sys.stderr.write("kazoo_bench: %s failed: %r\n" % (a.scenario, e))
        return 1
    finally:
        timer.cancel()
    return 0


if __name__ == "__main__":
    sys.exit(main())
