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
 *                    bench/driver/scenarios/failover.cpp). Kill mode: the leaders start spread over the
 *                    server's 2 s tick.
 *   increments       (issue 40) K [8] sessions, one thread each, looping increment() on one
 *                    DistributedAtomicLong at P until N [2000] increments in total; latency = one increment;
 *                    --mode optimistic (RetryNTimes(1000, 1 ms)) or promoted (one try, then PromotedToLock
 *                    on P-lock under that policy); the counter is checked at the end (CounterScenario).
 *   cache-populate, cache-init, cache-events
 *                    (issue 39) a tree of N (--nodes) leaves; the time for a CuratorCache or TreeCache
 *                    (--recipe curator|tree) to initialize, with heap and server watches per node; the
 *                    write-to-listener latency of changes (CacheScenarios).
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
 * Built by bench/run_bench.py with plain javac against the Debian Curator jars, with the other classes of
 * this directory: LockScenarios, CounterScenario, CacheScenarios and FailoverScenario (the scenarios), Samples, Result, Crew
 * and Json.
 */

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

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
    int nodes = -1; // the cache scenarios' leaves
    int sessionTimeoutMs = 30000;
    int timeoutS = 600;
    String mntrAddress; // host:port of a server whose `mntr` is read around the measured part
    String recipe = "latch"; // failover: latch | selector; cache-*: curator | tree (parse sets it)
    String mode = "close";   // failover: close | kill; increments: optimistic | promoted (parse sets it)

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
                    case "--nodes": nodes = Integer.parseInt(v); break;
                    case "--session-timeout-ms": sessionTimeoutMs = Integer.parseInt(v); break;
                    case "--timeout-s": timeoutS = Integer.parseInt(v); break;
                    case "--mntr": mntrAddress = v; break;
                    case "--recipe":
                        if (!v.equals("latch") && !v.equals("selector") && !v.equals("curator") && !v.equals("tree")) {
                            die(2, "--recipe: latch, selector, curator or tree, not " + v);
                        }
                        recipe = v;
                        break;
                    case "--mode":
                        if (!v.equals("close") && !v.equals("kill") && !v.equals("optimistic")
                            && !v.equals("promoted")) {
                            die(2, "--mode: close, kill, optimistic or promoted, not " + v);
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
                   + " [--recipe latch|selector|curator|tree] [--nodes N] [--mode close|kill|optimistic|promoted]");
        }
        boolean counterMode = mode.equals("optimistic") || mode.equals("promoted");
        if (scenario.equals("increments") && !counterMode) {
            if (!mode.equals("close")) {
                die(2, "--mode: increments takes optimistic or promoted, not " + mode);
            }
            mode = "optimistic"; // the default ("close" is failover's)
        }
        boolean cacheRecipe = recipe.equals("curator") || recipe.equals("tree");
        if (scenario.startsWith("cache-") && !cacheRecipe) {
            if (!recipe.equals("latch")) {
                die(2, "--recipe: the cache scenarios take curator or tree, not " + recipe);
            }
            recipe = "curator"; // the default ("latch" is failover's)
        }
        if (scenario.equals("failover") && cacheRecipe) {
            die(2, "--recipe: failover takes latch or selector, not " + recipe);
        }
        if (scenario.equals("failover") && counterMode) {
            die(2, "--mode: failover takes close or kill, not " + mode);
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

    // ------------------------------------------------------------------------------------------
    // Output

    // ------------------------------------------------------------------------------------------
    // Leader failover

    double mntrValue(String key) {
        Map<String, Double> m = readMntr();
        Double v = m == null ? null : m.get(key);
        return v == null ? -1 : v;
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
        LockScenarios locks = new LockScenarios(this);
        FailoverScenario failover = new FailoverScenario(this);
        Result r;
        if (scenario.equals("failover-leader")) {
            failover.failoverLeader();
            return;
        }
        switch (scenario) {
            case "uncontended": r = locks.uncontended(); break;
            case "contended": r = locks.contended(); break;
            case "drain": r = locks.drain(); break;
            case "semaphore-mutex": r = locks.semaphoreMutex(); break;
            case "rwlock": r = locks.rwlock(); break;
            case "multilock": r = locks.multilock(); break;
            case "failover": r = failover.failover(); break;
            case "increments": r = new CounterScenario(this).increments(); break;
            case "cache-populate": r = new CacheScenarios(this).populate(); break;
            case "cache-init": r = new CacheScenarios(this).init(); break;
            case "cache-events": r = new CacheScenarios(this).events(); break;
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
        if (scenario.startsWith("cache-")) {
            params.put("nodes", nodes >= 0 ? nodes : null);
            params.put("recipe", recipe);
        }
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
        System.out.println(Json.json(out));
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
