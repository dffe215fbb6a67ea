/* CuratorBench's leader failover scenario (issue 28), as zkr_bench's (bench/driver/scenarios/failover.cpp). */

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.Watcher;

/** CuratorBench's leader failover: the measuring side (failover) and the leader process (failover-leader). */
final class FailoverScenario {
    private final CuratorBench b;

    FailoverScenario(CuratorBench b) {
        this.b = b;
    }

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
        CuratorFramework c = b.newSession();
        LeaderLatch latch = null;
        LeaderSelector selector = null;
        String node;
        if (b.recipe.equals("latch")) {
            latch = new LeaderLatch(c, b.path, "leader");
            latch.start();
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no leadership within 30 s");
            }
            node = latch.getOurPath();
        } else {
            HoldingListener listener = new HoldingListener();
            selector = new LeaderSelector(c, b.path, listener);
            selector.setId("leader");
            selector.start();
            if (listener.started.waitFor(30_000) == null) {
                throw new IllegalStateException("no leadership within 30 s");
            }
            List<String> children = c.getChildren().forPath(b.path); // ours is the only node: we lead alone
            if (children.size() != 1) {
                throw new IllegalStateException("expected one node under " + b.path + ", found " + children);
            }
            node = ZKPaths.makePath(b.path, children.get(0));
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
        b.closeSessions();
    }

    /** The server's tickTime (run_bench.py's zoo.cfg), over which failover spreads its kills. */
    static final long EXPIRY_TICK_MS = 2000;

    Result failover() throws Exception {
        final String[] counters = {"zk_cnt_readlatency", "zk_cnt_updatelatency",
                                   "zk_sum_node_created_watch_count", "zk_sum_node_deleted_watch_count",
                                   "zk_sum_node_changed_watch_count", "zk_sum_node_children_watch_count",
                                   "zk_packets_received"};
        int n = Math.max(1, CuratorBench.or(b.ops, 10));
        boolean kill = b.mode.equals("kill");
        long leadWithinMs = 3L * b.sessionTimeoutMs + 30_000;
        // --session-timeout-ms is the leader's. Ours are long: the server counts pings as reads, and a short
        // timeout would have our two sessions ping during the window of a kill (a third of the timeout idle).
        CuratorFramework observer = b.newSession(30000); // the node-deleted notice
        CuratorFramework follower = b.newSession(30000);
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
            String p = ZKPaths.makePath(b.path, Integer.toString(i));
            ProcessBuilder pb = new ProcessBuilder(javaExe, "-cp", System.getProperty("java.class.path"),
                "CuratorBench", "--connect", b.connect, "--scenario", "failover-leader", "--path", p,
                "--recipe", b.recipe, "--session-timeout-ms", Integer.toString(b.sessionTimeoutMs),
                "--timeout-s", Integer.toString(b.timeoutS));
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
                double watches0 = b.mntrAddress == null ? -1 : b.mntrValue("zk_watch_count");

                LeaderLatch latch = null;
                LeaderSelector selector = null;
                Stamp leads;
                if (b.recipe.equals("latch")) {
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
                    while (b.mntrValue("zk_watch_count") < watches0 + 1 && System.nanoTime() < dl) {
                        Thread.sleep(5);
                    }
                } else {
                    Thread.sleep(500);
                }

                Map<String, Double> before = b.readMntr();
                long cpu0 = CuratorBench.cpuNanos();
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
                Map<String, Double> after = b.readMntr();
                r.cpuNs += CuratorBench.cpuNanos() - cpu0;
                if (before != null && after != null) {
                    for (String k : counters) {
                        sums.put(k, sums.get(k) + after.getOrDefault(k, 0.0) - before.getOrDefault(k, 0.0));
                    }
                    String own = "zk_sum_node_deleted_watch_count"; // the observer's watch
                    sums.put(own, sums.get(own) - 1);
                } else if (b.mntrAddress != null && b.mntrError == null) {
                    b.mntrError = "no mntr sample";
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
        if (b.mntrAddress != null && b.mntrError == null) {
            b.mntrBefore = new LinkedHashMap<>();
            for (String k : counters) {
                b.mntrBefore.put(k, 0.0);
            }
            b.mntrAfter = sums;
        }
        Arrays.sort(lat);
        r.ops = n;
        r.latNs = lat;
        r.extra.put("sessions", 2);
        r.extra.put("recipe", b.recipe);
        r.extra.put("mode", b.mode);
        r.extra.put("session_timeout_ms", b.sessionTimeoutMs);
        r.extra.put("failover_ms", failoverMs);
        r.extra.put("notice_ms", noticeMs);
        r.extra.put("end_to_notice_ms", endToNoticeMs);
        return r;
    }
}
