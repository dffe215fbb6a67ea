/*
 * CuratorBench: the Apache Curator 5.x driver of zkrecipes' lock benchmarks.
 *
 * Same command line and output as bench/python/kazoo_bench.py and the C++ `zkr_bench`, so that
 * bench/run_bench.py drives all three the same way:
 *
 *   CuratorBench --connect HOSTS --scenario S --path P [--clients K] [--ops N] [--waiters W]
 *                [--warmup N] [--session-timeout-ms MS] [--timeout-s S] [--mntr HOST:PORT]
 *
 * Scenarios (defaults in brackets):
 *   uncontended      one session, N [2000] InterProcessMutex acquire+release pairs; latency per pair.
 *   contended        K [8] sessions, one thread each, looping acquire/release on P until N [2000]
 *                    handoffs are done in total; latency = acquire latency.
 *   drain            one holder holds P; W [200] waiters (threads spread over K [min(8,W)] sessions,
 *                    one InterProcessMutex each) queue up; once W nodes wait, the holder releases and
 *                    every waiter acquires and releases once. ops = W handoffs; latency = time between
 *                    consecutive acquisitions; fifo_ok = acquisition order equals sequence order.
 *   semaphore-mutex  one session, N [1000] InterProcessSemaphoreMutex acquire+release pairs.
 *   rwlock           4 reader sessions + 1 writer session (InterProcessReadWriteLock) looping for
 *                    N [5000] milliseconds; ops = reads + writes; extra has reads/s and writes/s.
 *   multilock        InterProcessMultiLock over K [4] mutex paths P/0 .. P/K-1; N [500] pairs.
 *   failover         (issue 28) N [10] leader failovers, as zkr_bench's: the leader runs in a JVM of its
 *                    own (this class, scenario failover-leader, on P/<i>); --recipe latch|selector
 *                    (LeaderLatch or LeaderSelector), --mode close|kill (the leader closes; or SIGKILL, the
 *                    node goes at session expiry). Latency = from the leader's end to our isLeader /
 *                    takeLeadership; extra lists the samples (failover_ms, notice_ms, end_to_notice_ms: see
 *                    bench/zkr_bench.cpp). Kill mode: the leaders start spread over the server's 2 s tick.
 * --warmup: unmeasured pairs/handoffs before the measured part [100; drain 0]; for rwlock it is
 * milliseconds of unmeasured running [500].
 *
 * Output: exactly one JSON line on stdout:
 *   {"library":"curator","scenario":...,"params":{...},"ops":n,"seconds":s,"ops_per_sec":x,
 *    "p50_us":...,"p99_us":...,"cpu_seconds":c,"fifo_ok":true|false|null,"extra":{...}}
 * cpu_seconds is the process's user+sys CPU time during the measured part only
 * (extra.cpu_seconds_total: the whole process, JVM start-up included).
 * With --mntr, ZooKeeper's `mntr` counters are read just before and just after the measured part and
 * extra.mntr holds the differences: reads (zk_cnt_readlatency), writes (zk_cnt_updatelatency),
 * watch_events (the zk_sum_node_*_watch_count sums: watches fired) and packets_received.
 * extra.peak_rss_mb (VmHWM) and extra.max_threads (the most threads seen, JVM threads included; in drain,
 * sampled once every waiter's thread is queued) are reported for every scenario.
 * extra.sessions and extra.total_ops (measured + warmup operations) let the runner estimate the
 * same from counters read around the whole run when a driver has no --mntr.
 * Exit status: 0 ok; 1 the run failed (message on stderr); 2 usage or unsupported scenario;
 * 3 the --timeout-s watchdog [600] fired.
 *
 * Built by bench/run_bench.py with plain javac against the Debian Curator jars.
 */

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;

public final class CuratorBench {

    // ------------------------------------------------------------------------------------------
    // Arguments

    String connect;
    String scenario;
    String path;
    int clients = -1;
    int ops = -1;
    int waiters = -1;
    int warmup = -1;
    int sessionTimeoutMs = 30000;
    int timeoutS = 600;
    String mntrAddress; // host:port of a server whose `mntr` is read around the measured part
    String recipe = "latch"; // failover: latch | selector
    String mode = "close";   // failover: close | kill

    static void die(int status, String message) {
        System.err.println("CuratorBench: " + message);
        System.err.flush();
        System.exit(status);
    }

    void parse(String[] args) {
        for (int i = 0; i < args.length; ++i) {
            String a = args[i];
            if (i + 1 >= args.length) {
                die(2, "missing value after " + a);
            }
            String v = args[++i];
            try {
                switch (a) {
                    case "--connect": connect = v; break;
                    case "--scenario": scenario = v; break;
                    case "--path": path = v; break;
                    case "--clients": clients = Integer.parseInt(v); break;
                    case "--ops": ops = Integer.parseInt(v); break;
                    case "--waiters": waiters = Integer.parseInt(v); break;
                    case "--warmup": warmup = Integer.parseInt(v); break;
                    case "--session-timeout-ms": sessionTimeoutMs = Integer.parseInt(v); break;
                    case "--timeout-s": timeoutS = Integer.parseInt(v); break;
                    case "--mntr": mntrAddress = v; break;
                    case "--recipe":
                        if (!v.equals("latch") && !v.equals("selector")) {
                            die(2, "--recipe: latch or selector, not " + v);
                        }
                        recipe = v;
                        break;
                    case "--mode":
                        if (!v.equals("close") && !v.equals("kill")) {
                            die(2, "--mode: close or kill, not " + v);
                        }
                        mode = v;
                        break;
                    default: die(2, "unknown option " + a);
                }
            } catch (NumberFormatException e) {
                die(2, "bad number for " + a + ": " + v);
            }
        }
        if (connect == null || scenario == null || path == null) {
            die(2, "usage: CuratorBench --connect HOSTS --scenario S --path P [--clients K] [--ops N]"
                   + " [--waiters W] [--warmup N] [--session-timeout-ms MS] [--timeout-s S] [--mntr HOST:PORT]"
                   + " [--recipe latch|selector] [--mode close|kill]");
        }
    }

    static int or(int value, int dflt) {
        return value >= 0 ? value : dflt;
    }

    // ------------------------------------------------------------------------------------------
    // Sessions

    final List<CuratorFramework> sessions = new ArrayList<>();

    CuratorFramework newSession() throws Exception {
        return newSession(sessionTimeoutMs);
    }

    CuratorFramework newSession(int timeoutMs) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.builder()
            .connectString(connect)
            .sessionTimeoutMs(timeoutMs)
            .connectionTimeoutMs(Math.min(15000, timeoutMs))
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            .build();
        synchronized (sessions) {
            sessions.add(c);
        }
        c.start();
        if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("could not connect to " + connect);
        }
        return c;
    }

    void closeSessions() {
        synchronized (sessions) {
            for (CuratorFramework c : sessions) {
                try {
                    c.close();
                } catch (Throwable t) {
                    // the server expires what we could not close
                }
            }
        }
    }

    /** InterProcessMutex with its protected getLockPath() visible. */
    static final class NamedMutex extends InterProcessMutex {
        NamedMutex(CuratorFramework client, String path) {
            super(client, path);
        }

        String lockPath() {
            return getLockPath();
        }
    }

    // ------------------------------------------------------------------------------------------
    // Measurement helpers

    static long cpuNanos() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return -1;
    }

    /** Nearest-rank percentile in microseconds; null when there is no sample. */
    static Double percentileUs(long[] sortedNs, double p) {
        if (sortedNs.length == 0) {
            return null;
        }
        int rank = (int) Math.ceil(p * sortedNs.length);
        int idx = Math.min(sortedNs.length - 1, Math.max(0, rank - 1));
        return Math.round(sortedNs[idx] / 100.0) / 10.0;
    }

    /** A growable array of nanosecond samples, one per thread (no sharing). */
    static final class Samples {
        long[] v = new long[256];
        int n;

        void add(long x) {
            if (n == v.length) {
                v = Arrays.copyOf(v, n * 2);
            }
            v[n++] = x;
        }

        static long[] merge(List<Samples> all) {
            int total = 0;
            for (Samples s : all) {
                total += s.n;
            }
            long[] out = new long[total];
            int at = 0;
            for (Samples s : all) {
                System.arraycopy(s.v, 0, out, at, s.n);
                at += s.n;
            }
            Arrays.sort(out);
            return out;
        }
    }

    static final class Result {
        long ops;
        double seconds;
        long[] latNs = new long[0];
        Boolean fifoOk;
        long cpuNs;
        final Map<String, Object> extra = new LinkedHashMap<>();
    }

    interface Body {
        void run() throws Exception;
    }

    /** Starts n threads running body(i) that wait on a common start gate. */
    static final class Crew {
        final List<Thread> threads = new ArrayList<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();

        void start(int n, String name, java.util.function.IntFunction<Body> body) {
            for (int i = 0; i < n; ++i) {
                Body b = body.apply(i);
                Thread t = new Thread(null, () -> {
                    try {
                        b.run();
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, name + "-" + i, 512 * 1024);
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
        }

        void join(long deadlineNanos) throws Exception {
            for (Thread t : threads) {
                long left = deadlineNanos - System.nanoTime();
                if (left > 0) {
                    t.join(Math.max(1, left / 1_000_000));
                }
                if (t.isAlive()) {
                    throw new IllegalStateException("thread " + t.getName() + " did not finish in time");
                }
            }
            check();
        }

        void check() throws Exception {
            Throwable f = failure.get();
            if (f != null) {
                throw new RuntimeException("worker failed: " + f, f);
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // The process's footprint: peak resident set and the most threads seen (scenario 4's measures)

    final AtomicInteger maxThreads = new AtomicInteger();

    /** A field of /proc/self/status ("VmHWM", "Threads") as a number (kB for the Vm fields), or -1. */
    static long procStatus(String key) {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Paths.get("/proc/self/status"))) {
                if (line.startsWith(key + ":")) {
                    return Long.parseLong(line.substring(key.length() + 1).trim().split("\\s+")[0]);
                }
            }
        } catch (java.io.IOException | NumberFormatException e) {
            // not Linux, or a format we do not know
        }
        return -1;
    }

    /** Counts the process's threads now (JVM threads included) and keeps the largest count seen. */
    void sampleThreads() {
        long n = procStatus("Threads");
        maxThreads.accumulateAndGet((int) n, Math::max);
    }

    long deadline() {
        return System.nanoTime() + TimeUnit.SECONDS.toNanos(Math.max(1, timeoutS - 5));
    }

    // ------------------------------------------------------------------------------------------
    // ZooKeeper's own counters around the measured part (--mntr HOST:PORT)

    Map<String, Double> mntrBefore;
    Map<String, Double> mntrAfter;
    String mntrError;

    Map<String, Double> readMntr() {
        if (mntrAddress == null) {
            return null;
        }
        int colon = mntrAddress.lastIndexOf(':');
        try (java.net.Socket sock = new java.net.Socket()) {
            sock.connect(new java.net.InetSocketAddress(mntrAddress.substring(0, colon),
                                                        Integer.parseInt(mntrAddress.substring(colon + 1))), 5000);
            sock.setSoTimeout(5000);
            sock.getOutputStream().write("mntr".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            sock.getOutputStream().flush();
            byte[] all = sock.getInputStream().readAllBytes();
            Map<String, Double> out = new LinkedHashMap<>();
            for (String line : new String(all, java.nio.charset.StandardCharsets.UTF_8).split("\n")) {
                String[] kv = line.split("\t", 2);
                if (kv.length == 2) {
                    try {
                        out.put(kv[0].trim(), Double.parseDouble(kv[1].trim()));
                    } catch (NumberFormatException e) {
                        // a text value (version, state)
                    }
                }
            }
            return out;
        } catch (Exception e) {
            mntrError = e.toString();
            return null;
        }
    }

    void markStart() {
        mntrBefore = readMntr();
    }

    void markEnd() {
        mntrAfter = readMntr();
    }

    /** Requests the server handled during the measured part: reads, writes, watch events, packets. */
    Map<String, Object> mntrDelta() {
        Map<String, Object> d = new LinkedHashMap<>();
        if (mntrBefore == null || mntrAfter == null) {
            d.put("error", mntrError != null ? mntrError : "no mntr sample");
            return d;
        }
        d.put("reads", delta("zk_cnt_readlatency"));
        d.put("writes", delta("zk_cnt_updatelatency"));
        d.put("watch_events", delta("zk_sum_node_created_watch_count") + delta("zk_sum_node_deleted_watch_count")
                              + delta("zk_sum_node_changed_watch_count") + delta("zk_sum_node_children_watch_count"));
        d.put("packets_received", delta("zk_packets_received"));
        return d;
    }

    long delta(String key) {
        Double a = mntrBefore.get(key);
        Double b = mntrAfter.get(key);
        return a == null || b == null ? 0 : Math.round(b - a);
    }

    // ------------------------------------------------------------------------------------------
    // Scenarios

    /** N timed pairs on one lock (uncontended, semaphore-mutex, multilock). */
    Result pairs(InterProcessLock lock, int n, int warm) throws Exception {
        for (int i = 0; i < warm; ++i) {
            lock.acquire();
            lock.release();
        }
        Samples lat = new Samples();
        markStart();
        long cpu0 = cpuNanos();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; ++i) {
            long s = System.nanoTime();
            lock.acquire();
            lock.release();
            lat.add(System.nanoTime() - s);
        }
        long t1 = System.nanoTime();
        markEnd();
        Result r = new Result();
        r.cpuNs = cpuNanos() - cpu0;
        r.ops = n;
        r.seconds = (t1 - t0) / 1e9;
        r.latNs = Samples.merge(List.of(lat));
        r.extra.put("total_ops", n + warm);
        return r;
    }

    Result uncontended() throws Exception {
        CuratorFramework c = newSession();
        Result r = pairs(new InterProcessMutex(c, path), or(ops, 2000), or(warmup, 100));
        r.extra.put("sessions", 1);
        return r;
    }

    Result semaphoreMutex() throws Exception {
        CuratorFramework c = newSession();
        Result r = pairs(new InterProcessSemaphoreMutex(c, path), or(ops, 1000), or(warmup, 100));
        r.extra.put("sessions", 1);
        return r;
    }

    Result multilock() throws Exception {
        int k = Math.max(1, or(clients, 4));
        CuratorFramework c = newSession();
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < k; ++i) {
            paths.add(ZKPaths.makePath(path, Integer.toString(i)));
        }
        Result r = pairs(new InterProcessMultiLock(c, paths), or(ops, 500), or(warmup, 100));
        r.extra.put("sessions", 1);
        r.extra.put("locks", k);
        return r;
    }

    Result contended() throws Exception {
        int k = Math.max(1, or(clients, 8));
        int n = or(ops, 2000);
        int warm = or(warmup, 100);
        List<CuratorFramework> cs = new ArrayList<>();
        for (int i = 0; i < k; ++i) {
            cs.add(newSession());
        }
        List<InterProcessMutex> locks = new ArrayList<>();
        for (CuratorFramework c : cs) {
            locks.add(new InterProcessMutex(c, path));
        }
        List<Samples> lats = new ArrayList<>();
        for (int i = 0; i < k; ++i) {
            lats.add(new Samples());
        }
        AtomicInteger warmLeft = new AtomicInteger(warm);
        AtomicInteger left = new AtomicInteger(n);
        CountDownLatch warmDone = new CountDownLatch(k);
        CountDownLatch go = new CountDownLatch(1);
        Crew crew = new Crew();
        crew.start(k, "contender", i -> () -> {
            InterProcessMutex m = locks.get(i);
            while (warmLeft.getAndDecrement() > 0) {
                m.acquire();
                m.release();
            }
            warmDone.countDown();
            go.await();
            Samples lat = lats.get(i);
            while (left.getAndDecrement() > 0) {
                long s = System.nanoTime();
                m.acquire();
                lat.add(System.nanoTime() - s);
                m.release();
            }
        });
        long deadline = deadline();
        while (!warmDone.await(100, TimeUnit.MILLISECONDS)) {
            crew.check();
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("warmup did not finish in time");
            }
        }
        markStart();
        long cpu0 = cpuNanos();
        long t0 = System.nanoTime();
        go.countDown();
        crew.join(deadline);
        long t1 = System.nanoTime();
        markEnd();
        Result r = new Result();
        r.cpuNs = cpuNanos() - cpu0;
        r.ops = n;
        r.seconds = (t1 - t0) / 1e9;
        r.latNs = Samples.merge(lats);
        r.extra.put("sessions", k);
        r.extra.put("total_ops", n + warm);
        return r;
    }

    Result drain() throws Exception {
        int w = Math.max(1, or(waiters, 200));
        int k = Math.max(1, Math.min(w, or(clients, 8)));
        CuratorFramework holderSession = newSession();
        List<CuratorFramework> cs = new ArrayList<>();
        for (int i = 0; i < k; ++i) {
            cs.add(newSession());
        }
        InterProcessMutex holder = new InterProcessMutex(holderSession, path);
        holder.acquire();

        AtomicInteger order = new AtomicInteger();
        long[] acquiredAt = new long[w];   // by acquisition order
        long[] seqByOrder = new long[w];   // sequence number of the i-th acquirer
        Crew crew = new Crew();
        crew.start(w, "waiter", i -> () -> {
            NamedMutex m = new NamedMutex(cs.get(i % k), path);
            m.acquire();
            int pos = order.getAndIncrement(); // exact: we hold the lock
            acquiredAt[pos] = System.nanoTime();
            String node = m.lockPath();
            seqByOrder[pos] = Long.parseLong(node.substring(node.length() - 10));
            m.release();
        });

        // Wait until all W waiters' nodes exist (plus the holder's).
        long deadline = deadline();
        while (true) {
            crew.check();
            int have;
            try {
                have = holderSession.getChildren().forPath(path).size();
            } catch (KeeperException.NoNodeException e) {
                have = 0;
            }
            if (have >= w + 1) {
                break;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + have + " of " + (w + 1) + " nodes queued in time");
            }
            Thread.sleep(5);
        }
        sampleThreads(); // every waiter's thread is alive and blocked in acquire()
        markStart();
        long cpu0 = cpuNanos();
        long t0 = System.nanoTime();
        holder.release();
        crew.join(deadline);
        long t1 = System.nanoTime();
        markEnd();

        Result r = new Result();
        r.cpuNs = cpuNanos() - cpu0;
        r.ops = w;
        r.seconds = (t1 - t0) / 1e9;
        Samples gaps = new Samples();
        boolean fifo = order.get() == w;
        for (int i = 0; i < w; ++i) {
            gaps.add(acquiredAt[i] - (i == 0 ? t0 : acquiredAt[i - 1]));
            if (i > 0 && seqByOrder[i] <= seqByOrder[i - 1]) {
                fifo = false;
            }
        }
        r.latNs = Samples.merge(List.of(gaps));
        r.fifoOk = fifo;
        r.extra.put("sessions", k + 1);
        r.extra.put("waiters", w);
        r.extra.put("total_ops", w + 1);
        return r;
    }

    Result rwlock() throws Exception {
        int readers = 4;
        long durationMs = or(ops, 5000);
        long warmMs = or(warmup, 500);
        List<InterProcessMutex> locks = new ArrayList<>();
        for (int i = 0; i < readers + 1; ++i) {
            InterProcessReadWriteLock rw = new InterProcessReadWriteLock(newSession(), path);
            locks.add(i < readers ? rw.readLock() : rw.writeLock());
        }
        AtomicBoolean measuring = new AtomicBoolean(false);
        AtomicBoolean stop = new AtomicBoolean(false);
        List<Samples> lats = new ArrayList<>();
        for (int i = 0; i < readers + 1; ++i) {
            lats.add(new Samples());
        }
        long[] warmOps = new long[readers + 1];
        long[] timeouts = new long[readers + 1];
        Crew crew = new Crew();
        crew.start(readers + 1, "rw", i -> () -> {
            InterProcessMutex m = locks.get(i);
            Samples lat = lats.get(i);
            while (!stop.get()) {
                boolean counted = measuring.get();
                long s = System.nanoTime();
                if (!m.acquire(10, TimeUnit.SECONDS)) {
                    ++timeouts[i];
                    continue;
                }
                m.release();
                long d = System.nanoTime() - s;
                if (counted && !stop.get()) {
                    lat.add(d);
                } else {
                    ++warmOps[i];
                }
            }
        });
        Thread.sleep(warmMs);
        crew.check();
        markStart();
        long cpu0 = cpuNanos();
        long t0 = System.nanoTime();
        measuring.set(true);
        Thread.sleep(durationMs);
        stop.set(true);
        long t1 = System.nanoTime();
        markEnd();
        long cpu1 = cpuNanos();
        crew.join(System.nanoTime() + TimeUnit.SECONDS.toNanos(30));

        Result r = new Result();
        r.cpuNs = cpu1 - cpu0;
        r.seconds = (t1 - t0) / 1e9;
        long[] readLat = Samples.merge(lats.subList(0, readers));
        long[] writeLat = Samples.merge(lats.subList(readers, readers + 1));
        long[] all = Samples.merge(lats);
        r.ops = all.length;
        r.latNs = all;
        long warmTotal = 0;
        long timeoutTotal = 0;
        for (int i = 0; i < readers + 1; ++i) {
            warmTotal += warmOps[i];
            timeoutTotal += timeouts[i];
        }
        r.extra.put("sessions", readers + 1);
        r.extra.put("readers", readers);
        r.extra.put("writers", 1);
        r.extra.put("duration_ms", durationMs);
        r.extra.put("reads", readLat.length);
        r.extra.put("writes", writeLat.length);
        r.extra.put("reads_per_sec", readLat.length / r.seconds);
        r.extra.put("writes_per_sec", writeLat.length / r.seconds);
        r.extra.put("read_p50_us", percentileUs(readLat, 0.50));
        r.extra.put("read_p99_us", percentileUs(readLat, 0.99));
        r.extra.put("write_p50_us", percentileUs(writeLat, 0.50));
        r.extra.put("write_p99_us", percentileUs(writeLat, 0.99));
        r.extra.put("timeouts", timeoutTotal);
        r.extra.put("total_ops", all.length + warmTotal);
        return r;
    }

    // ------------------------------------------------------------------------------------------
    // Output

    // ------------------------------------------------------------------------------------------
    // Leader failover

    /** A moment (System.nanoTime, CLOCK_MONOTONIC on Linux as zkr_bench's steady clock) recorded once. */
    static final class Stamp {
        private final CountDownLatch set = new CountDownLatch(1);
        private final AtomicLong ns = new AtomicLong();

        void set() {
            long t = System.nanoTime();
            if (set.getCount() > 0 && ns.compareAndSet(0, t)) {
                set.countDown();
            }
        }

        /** The moment, or null when it did not come within ms milliseconds. */
        Long waitFor(long ms) throws InterruptedException {
            return set.await(ms, TimeUnit.MILLISECONDS) ? ns.get() : null;
        }
    }

    /** The failover's LeaderSelector listener: stamps its first term, keeps leadership until interrupted. */
    static final class HoldingListener extends LeaderSelectorListenerAdapter {
        final Stamp started = new Stamp();

        @Override
        public void takeLeadership(CuratorFramework client) throws Exception {
            started.set();
            Thread.sleep(Long.MAX_VALUE); // until close() interrupts us
        }
    }

    /**
     * The leader process of `failover` (scenario failover-leader): leads on --path, prints "LEADING <node>";
     * on the input line "close" closes its participant and prints "CLOSING <nanoTime just before close()>";
     * exits on "exit" or at the end of its input (its session closed then: no closeSession in the parent's
     * measured window).
     */
    void failoverLeader() throws Exception {
        CuratorFramework c = newSession();
        LeaderLatch latch = null;
        LeaderSelector selector = null;
        String node;
        if (recipe.equals("latch")) {
            latch = new LeaderLatch(c, path, "leader");
            latch.start();
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no leadership within 30 s");
            }
            node = latch.getOurPath();
        } else {
            HoldingListener listener = new HoldingListener();
            selector = new LeaderSelector(c, path, listener);
            selector.setId("leader");
            selector.start();
            if (listener.started.waitFor(30_000) == null) {
                throw new IllegalStateException("no leadership within 30 s");
            }
            List<String> children = c.getChildren().forPath(path); // ours is the only node: we lead alone
            if (children.size() != 1) {
                throw new IllegalStateException("expected one node under " + path + ", found " + children);
            }
            node = ZKPaths.makePath(path, children.get(0));
        }
        System.out.println("LEADING " + node);
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, UTF_8));
        for (String line = in.readLine(); line != null && !line.equals("exit"); line = in.readLine()) {
            if (!line.equals("close")) {
                continue;
            }
            long t = System.nanoTime();
            if (latch != null) {
                latch.close();
            } else {
                selector.close();
            }
            System.out.println("CLOSING " + t);
            System.out.flush();
        }
        closeSessions();
    }

    /** The server's tickTime (run_bench.py's zoo.cfg), over which failover spreads its kills. */
    static final long EXPIRY_TICK_MS = 2000;

    Result failover() throws Exception {
        final String[] counters = {"zk_cnt_readlatency", "zk_cnt_updatelatency",
                                   "zk_sum_node_created_watch_count", "zk_sum_node_deleted_watch_count",
                                   "zk_sum_node_changed_watch_count", "zk_sum_node_children_watch_count",
                                   "zk_packets_received"};
        int n = Math.max(1, or(ops, 10));
        boolean kill = mode.equals("kill");
        long leadWithinMs = 3L * sessionTimeoutMs + 30_000;
        // --session-timeout-ms is the leader's. Ours are long: the server counts pings as reads, and a short
        // timeout would have our two sessions ping during the window of a kill (a third of the timeout idle).
        CuratorFramework observer = newSession(30000); // the node-deleted notice
        CuratorFramework follower = newSession(30000);
        String javaExe = java.nio.file.Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        Map<String, Double> sums = new LinkedHashMap<>();
        for (String k : counters) {
            sums.put(k, 0.0);
        }
        long[] lat = new long[n];
        List<Object> failoverMs = new ArrayList<>();
        List<Object> noticeMs = new ArrayList<>();
        List<Object> endToNoticeMs = new ArrayList<>();
        Result r = new Result();
        for (int i = 0; i < n; ++i) {
            if (kill) { // leaders started spread over the server's tick, as zkr_bench's (see its failover())
                Thread.sleep((2L * i + 1) * EXPIRY_TICK_MS / (2L * n));
            }
            String p = ZKPaths.makePath(path, Integer.toString(i));
            ProcessBuilder pb = new ProcessBuilder(javaExe, "-cp", System.getProperty("java.class.path"),
                "CuratorBench", "--connect", connect, "--scenario", "failover-leader", "--path", p,
                "--recipe", recipe, "--session-timeout-ms", Integer.toString(sessionTimeoutMs),
                "--timeout-s", Integer.toString(timeoutS));
            pb.redirectError(ProcessBuilder.Redirect.INHERIT);
            Process leader = pb.start();
            try {
                BufferedReader out =
                    new BufferedReader(new InputStreamReader(leader.getInputStream(), UTF_8));
                Writer toLeader = new OutputStreamWriter(leader.getOutputStream(), UTF_8);
                String leading = out.readLine(); // bounded by the child's own 30 s and our watchdog
                if (leading == null || !leading.startsWith("LEADING /")) {
                    throw new IllegalStateException("leader process: expected LEADING, got " + leading);
                }
                String node = leading.substring(8);
                Stamp deleted = new Stamp();
                if (observer.checkExists().usingWatcher((Watcher) e -> {
                        if (e.getType() == Watcher.Event.EventType.NodeDeleted) {
                            deleted.set();
                        }
                    }).forPath(node) == null) {
                    throw new IllegalStateException("the leader's node " + node + " is gone too early");
                }
                double watches0 = mntrAddress == null ? -1 : mntrValue("zk_watch_count");

                LeaderLatch latch = null;
                LeaderSelector selector = null;
                Stamp leads;
                if (recipe.equals("latch")) {
                    Stamp s = new Stamp();
                    leads = s;
                    latch = new LeaderLatch(follower, p, "follower");
                    latch.addListener(new LeaderLatchListener() {
                        @Override
                        public void isLeader() {
                            s.set();
                        }

                        @Override
                        public void notLeader() {
                        }
                    });
                    latch.start();
                } else {
                    HoldingListener listener = new HoldingListener();
                    leads = listener.started;
                    selector = new LeaderSelector(follower, p, listener);
                    selector.setId("follower");
                    selector.start();
                }
                // Queued: the server holds one more watch (ours, on the leader's node); no --mntr: a moment.
                if (watches0 >= 0) {
                    long dl = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (mntrValue("zk_watch_count") < watches0 + 1 && System.nanoTime() < dl) {
                        Thread.sleep(5);
                    }
                } else {
                    Thread.sleep(500);
                }

                Map<String, Double> before = readMntr();
                long cpu0 = cpuNanos();
                long end;
                if (kill) {
                    end = System.nanoTime();
                    leader.destroyForcibly(); // SIGKILL
                    leader.waitFor();
                } else {
                    toLeader.write("close\n");
                    toLeader.flush();
                    String closing = out.readLine();
                    if (closing == null || !closing.startsWith("CLOSING ")) {
                        throw new IllegalStateException("leader process: expected CLOSING, got " + closing);
                    }
                    end = Long.parseLong(closing.substring(8).trim());
                }
                Long led = leads.waitFor(leadWithinMs);
                if (led == null) {
                    throw new IllegalStateException("failover " + i + ": the follower did not lead in time");
                }
                Map<String, Double> after = readMntr();
                r.cpuNs += cpuNanos() - cpu0;
                if (before != null && after != null) {
                    for (String k : counters) {
                        sums.put(k, sums.get(k) + after.getOrDefault(k, 0.0) - before.getOrDefault(k, 0.0));
                    }
                    String own = "zk_sum_node_deleted_watch_count"; // the observer's watch
                    sums.put(own, sums.get(own) - 1);
                } else if (mntrAddress != null && mntrError == null) {
                    mntrError = "no mntr sample";
                }
                Long noticed = deleted.waitFor(5000);
                lat[i] = led - end;
                r.seconds += (led - end) / 1e9;
                failoverMs.add(Math.round((led - end) / 1e3) / 1e3);
                noticeMs.add(noticed == null ? null : Math.round((led - noticed) / 1e3) / 1e3);
                endToNoticeMs.add(noticed == null ? null : Math.round((noticed - end) / 1e3) / 1e3);

                if (!kill) {
                    toLeader.write("exit\n");
                    toLeader.flush();
                    if (!leader.waitFor(20, TimeUnit.SECONDS)) {
                        leader.destroyForcibly();
                    }
                }
                if (latch != null) {
                    latch.close();
                } else {
                    selector.close();
                }
            } finally {
                if (leader.isAlive()) {
                    leader.destroyForcibly();
                    leader.waitFor();
                }
            }
        }
        if (mntrAddress != null && mntrError == null) {
            mntrBefore = new LinkedHashMap<>();
            for (String k : counters) {
                mntrBefore.put(k, 0.0);
            }
            mntrAfter = sums;
        }
        Arrays.sort(lat);
        r.ops = n;
        r.latNs = lat;
        r.extra.put("sessions", 2);
        r.extra.put("recipe", recipe);
        r.extra.put("mode", mode);
        r.extra.put("session_timeout_ms", sessionTimeoutMs);
        r.extra.put("failover_ms", failoverMs);
        r.extra.put("notice_ms", noticeMs);
        r.extra.put("end_to_notice_ms", endToNoticeMs);
        return r;
    }

    double mntrValue(String key) {
        Map<String, Double> m = readMntr();
        Double v = m == null ? null : m.get(key);
        return v == null ? -1 : v;
    }

    static String json(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof Boolean || v instanceof Integer || v instanceof Long) {
            return v.toString();
        }
        if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                return "null";
            }
            return Double.toString(Math.round(d * 1000.0) / 1000.0);
        }
        if (v instanceof List) {
            StringBuilder sb = new StringBuilder("[");
            for (Object item : (List<?>) v) {
                if (sb.length() > 1) {
                    sb.append(',');
                }
                sb.append(json(item));
            }
            return sb.append(']').toString();
        }
        if (v instanceof Map) {
            StringBuilder sb = new StringBuilder("{");
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (sb.length() > 1) {
                    sb.append(',');
                }
                sb.append(json(e.getKey().toString())).append(':').append(json(e.getValue()));
            }
            return sb.append('}').toString();
        }
        String s = v.toString();
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') {
                sb.append('\\').append(ch);
            } else if (ch < 0x20) {
                sb.append(String.format("\\u%04x", (int) ch));
            } else {
                sb.append(ch);
            }
        }
        return sb.append('"').toString();
    }

    /** Curator's version from the pom.properties inside its jar (Debian's jar has no manifest version). */
    static String curatorVersion() {
        try (java.io.InputStream in = CuratorFramework.class.getResourceAsStream(
                 "/META-INF/maven/org.apache.curator/curator-framework/pom.properties")) {
            if (in != null) {
                java.util.Properties props = new java.util.Properties();
                props.load(in);
                return props.getProperty("version");
            }
        } catch (java.io.IOException e) {
            // unknown
        }
        Package p = CuratorFramework.class.getPackage();
        return p != null ? p.getImplementationVersion() : null;
    }

    void run() throws Exception {
        Result r;
        if (scenario.equals("failover-leader")) {
            failoverLeader();
            return;
        }
        switch (scenario) {
            case "uncontended": r = uncontended(); break;
            case "contended": r = contended(); break;
            case "drain": r = drain(); break;
            case "semaphore-mutex": r = semaphoreMutex(); break;
            case "rwlock": r = rwlock(); break;
            case "multilock": r = multilock(); break;
            case "failover": r = failover(); break;
            default:
                die(2, "unsupported scenario " + scenario);
                return;
        }
        sampleThreads();
        long hwm = procStatus("VmHWM");
        closeSessions();
        r.extra.put("peak_rss_mb", hwm >= 0 ? hwm / 1024.0 : null);
        r.extra.put("max_threads", maxThreads.get() > 0 ? maxThreads.get() : null);

        Map<String, Object> params = new LinkedHashMap<>();
        params.put("clients", clients >= 0 ? clients : null);
        params.put("ops", ops >= 0 ? ops : null);
        params.put("waiters", waiters >= 0 ? waiters : null);
        params.put("warmup", warmup >= 0 ? warmup : null);
        params.put("path", path);
        r.extra.put("cpu_seconds_total", cpuNanos() / 1e9);
        if (mntrAddress != null) {
            r.extra.put("mntr", mntrDelta());
        }
        r.extra.put("curator_version", curatorVersion());
        r.extra.put("java_version", System.getProperty("java.version"));

        Map<String, Object> out = new LinkedHashMap<>();
        out.put("library", "curator");
        out.put("scenario", scenario);
        out.put("params", params);
        out.put("ops", r.ops);
        out.put("seconds", r.seconds);
        out.put("ops_per_sec", r.seconds > 0 ? r.ops / r.seconds : null);
        out.put("p50_us", percentileUs(r.latNs, 0.50));
        out.put("p99_us", percentileUs(r.latNs, 0.99));
        out.put("cpu_seconds", r.cpuNs >= 0 ? r.cpuNs / 1e9 : null);
        out.put("fifo_ok", r.fifoOk);
        out.put("extra", r.extra);
        System.out.println(json(out));
        System.out.flush();
    }

    public static void main(String[] args) {
        CuratorBench b = new CuratorBench();
        b.parse(args);
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(b.timeoutS));
                die(3, "timed out after " + b.timeoutS + " s");
            } catch (InterruptedException e) {
                // done in time
            }
        }, "watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        int status = 0;
        try {
            b.run();
        } catch (Throwable t) {
            System.err.println("CuratorBench: " + b.scenario + " failed: " + t);
            t.printStackTrace(System.err);
            status = 1;
            b.closeSessions();
        }
        System.exit(status);
    }
}
