/* CuratorBench's cache scenarios (issue 39): the same tree and measures as zkr_bench's scenarios/cache_*.cpp. */

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.cache.TreeCache;
import org.apache.curator.framework.recipes.cache.TreeCacheEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The tree: under P, groups P/g%05d of at most 100 leaves P/g%05d/n%03d with 32 bytes of data each, N leaves in
 * all; a cache of P holds 1 + groups + N nodes. --recipe curator: CuratorCache [default]; tree: TreeCache.
 *   cache-populate  creates the tree of N [10000] leaves (nodes already there are kept).
 *   cache-init      starts a cache of the tree of N [10000] leaves (made first when missing) and measures the
 *                   time until it is initialized; ops = nodes cached (checked). extra: init_ms,
 *                   heap_bytes_per_node (heap used after a full GC, before the start and after the
 *                   initialization, per node), rss_bytes_per_node (VmRSS growth, JVM heap sizing included),
 *                   server_watches (mntr zk_watch_count growth) and server_watches_per_node.
 *   cache-events    a cache of N [1000] leaves, initialized first; a second session sets one leaf's data after
 *                   another (M [2000] measured after W [100]), each once the listener saw the previous;
 *                   latency = from setData to the listener's call with the new data.
 */
final class CacheScenarios {
    static final int LEAVES_PER_GROUP = 100;

    private final CuratorBench b;

    CacheScenarios(CuratorBench b) {
        this.b = b;
    }

    static int groups(int leaves) {
        return (leaves + LEAVES_PER_GROUP - 1) / LEAVES_PER_GROUP;
    }

    static long treeNodes(int leaves) {
        return 1L + groups(leaves) + leaves;
    }

    String groupPath(int g) {
        return b.path + String.format("/g%05d", g);
    }

    String leafPath(int i) {
        return groupPath(i / LEAVES_PER_GROUP) + String.format("/n%03d", i % LEAVES_PER_GROUP);
    }

    /** Creates `paths` in order in the background, at most 256 in flight; NodeExists counts as done. */
    static void createAll(CuratorFramework c, List<String> paths, byte[] data) throws Exception {
        Semaphore window = new Semaphore(256);
        AtomicReference<String> failure = new AtomicReference<>();
        for (String p : paths) {
            window.acquire();
            if (failure.get() != null) {
                break;
            }
            c.create().inBackground((client, event) -> {
                int rc = event.getResultCode();
                if (rc != 0 && rc != KeeperException.Code.NODEEXISTS.intValue()) {
                    failure.compareAndSet(null, "creating " + event.getPath() + ": rc " + rc);
                }
                window.release();
            }).forPath(p, data);
        }
        window.acquire(256);
        if (failure.get() != null) {
            throw new IllegalStateException(failure.get());
        }
    }

    void populate(CuratorFramework c, int leaves) throws Exception {
        try {
            c.create().creatingParentsIfNeeded().forPath(b.path, new byte[0]);
        } catch (KeeperException.NodeExistsException e) {
            // kept
        }
        List<String> groups = new ArrayList<>();
        for (int g = 0; g < groups(leaves); ++g) {
            groups.add(groupPath(g));
        }
        List<String> leafPaths = new ArrayList<>();
        for (int i = 0; i < leaves; ++i) {
            leafPaths.add(leafPath(i));
        }
        createAll(c, groups, new byte[0]);
        byte[] data = new byte[32];
        Arrays.fill(data, (byte) 'x');
        createAll(c, leafPaths, data);
    }

    void ensureTree(CuratorFramework c, int leaves) throws Exception {
        Stat st = c.checkExists().forPath(b.path);
        if (st == null || st.getNumChildren() < groups(leaves)) {
            populate(c, leaves);
        }
    }

    /** A started cache of P and a way to wait for its initialization, its size, and to close it. */
    interface BenchCache extends AutoCloseable {
        boolean awaitInitialized(long timeoutNs) throws InterruptedException;

        long size();

        @Override
        void close();
    }

    BenchCache startCache(CuratorFramework c, BiConsumer<String, byte[]> onUpdate) throws Exception {
        CountDownLatch initialized = new CountDownLatch(1);
        if (b.recipe.equals("tree")) {
            TreeCache cache = TreeCache.newBuilder(c, b.path).build();
            cache.getListenable().addListener((client, e) -> {
                if (e.getType() == TreeCacheEvent.Type.INITIALIZED) {
                    initialized.countDown();
                } else if (e.getType() == TreeCacheEvent.Type.NODE_UPDATED && e.getData() != null) {
                    onUpdate.accept(e.getData().getPath(), e.getData().getData());
                }
            });
            cache.start();
            return new BenchCache() {
                public boolean awaitInitialized(long ns) throws InterruptedException {
                    return initialized.await(ns, TimeUnit.NANOSECONDS);
                }

                public long size() {
                    long n = 0;
                    for (java.util.Iterator<ChildData> it = cache.iterator(); it.hasNext(); it.next()) {
                        ++n;
                    }
                    return n;
                }

                public void close() {
                    cache.close();
                }
            };
        }
        CuratorCache cache = CuratorCache.build(c, b.path);
        cache.listenable().addListener(CuratorCacheListener.builder()
                                           .forChanges((oldNode, node) -> onUpdate.accept(node.getPath(), node.getData()))
                                           .forInitialized(initialized::countDown)
                                           .build());
        cache.start();
        return new BenchCache() {
            public boolean awaitInitialized(long ns) throws InterruptedException {
                return initialized.await(ns, TimeUnit.NANOSECONDS);
            }

            public long size() {
                return cache.size();
            }

            public void close() {
                cache.close();
            }
        };
    }

    static long heapUsedAfterGc() {
        MemoryMXBean m = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 3; ++i) {
            System.gc();
        }
        return m.getHeapMemoryUsage().getUsed();
    }

    Result populate() throws Exception {
        int leaves = CuratorBench.or(b.nodes, 10000);
        CuratorFramework c = b.newSession();
        Result r = new Result();
        long t0 = System.nanoTime();
        b.markStart();
        populate(c, leaves);
        b.markEnd();
        r.seconds = (System.nanoTime() - t0) / 1e9;
        r.ops = treeNodes(leaves) - 1;
        r.extra.put("sessions", 1);
        r.extra.put("leaves", leaves);
        return r;
    }

    Result init() throws Exception {
        int leaves = CuratorBench.or(b.nodes, 10000);
        CuratorFramework c = b.newSession();
        ensureTree(c, leaves);
        double watches0 = b.mntrValue("zk_watch_count");
        long heap0 = heapUsedAfterGc();
        long rss0 = CuratorBench.procStatus("VmRSS");
        Result r = new Result();
        long cpu0 = CuratorBench.cpuNanos();
        b.markStart();
        long t0 = System.nanoTime();
        BenchCache cache = startCache(c, (p, d) -> { });
        if (!cache.awaitInitialized(b.deadline() - System.nanoTime())) {
            throw new IllegalStateException("the cache was not initialized in time");
        }
        long t1 = System.nanoTime();
        b.markEnd();
        r.cpuNs = CuratorBench.cpuNanos() - cpu0;
        long rss1 = CuratorBench.procStatus("VmRSS");
        long heap1 = heapUsedAfterGc();
        double watches1 = b.mntrValue("zk_watch_count");
        long nodes = cache.size();
        if (nodes != treeNodes(leaves)) {
            throw new IllegalStateException("the cache holds " + nodes + " nodes, the tree " + treeNodes(leaves));
        }
        r.seconds = (t1 - t0) / 1e9;
        r.ops = nodes;
        r.latNs = new long[] {t1 - t0};
        r.extra.put("sessions", 1);
        r.extra.put("recipe", b.recipe);
        r.extra.put("nodes", nodes);
        r.extra.put("init_ms", (t1 - t0) / 1e6);
        r.extra.put("heap_bytes_per_node", (double) (heap1 - heap0) / nodes);
        if (rss0 >= 0 && rss1 >= 0) {
            r.extra.put("rss_bytes_per_node", (rss1 - rss0) * 1024.0 / nodes);
        }
        if (watches0 >= 0 && watches1 >= 0) {
            r.extra.put("server_watches", watches1 - watches0);
            r.extra.put("server_watches_per_node", (watches1 - watches0) / nodes);
        }
        cache.close();
        return r;
    }

    /** The change the writer waits for. */
    static final class Awaited {
        String path;
        byte[] data;
        boolean seen;

        synchronized void update(String p, byte[] d) {
            if (p.equals(path) && Arrays.equals(d, data)) {
                seen = true;
                notifyAll();
            }
        }
    }

    long oneChange(CuratorFramework writer, Awaited w, int leaves, int k) throws Exception {
        String p = leafPath(k % leaves);
        byte[] data = Arrays.copyOf(("change-" + k).getBytes(StandardCharsets.US_ASCII), 32);
        Arrays.fill(data, ("change-" + k).length(), 32, (byte) '.');
        synchronized (w) {
            w.path = p;
            w.data = data;
            w.seen = false;
        }
        long t0 = System.nanoTime();
        writer.setData().forPath(p, data);
        long deadline = b.deadline();
        synchronized (w) {
            while (!w.seen) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("the cache's listener never saw " + p + " change");
                }
                TimeUnit.NANOSECONDS.timedWait(w, left);
            }
        }
        return System.nanoTime() - t0;
    }

    Result events() throws Exception {
        int leaves = CuratorBench.or(b.nodes, 1000);
        int changes = CuratorBench.or(b.ops, 2000);
        int warm = CuratorBench.or(b.warmup, 100);
        CuratorFramework reader = b.newSession();
        CuratorFramework writer = b.newSession();
        ensureTree(writer, leaves);
        Awaited w = new Awaited();
        BenchCache cache = startCache(reader, w::update);
        if (!cache.awaitInitialized(b.deadline() - System.nanoTime())) {
            throw new IllegalStateException("the cache was not initialized in time");
        }
        for (int k = 0; k < warm; ++k) {
            oneChange(writer, w, leaves, k);
        }
        Samples lat = new Samples();
        Result r = new Result();
        long cpu0 = CuratorBench.cpuNanos();
        b.markStart();
        long t0 = System.nanoTime();
        for (int k = warm; k < warm + changes; ++k) {
            lat.add(oneChange(writer, w, leaves, k));
        }
        r.seconds = (System.nanoTime() - t0) / 1e9;
        b.markEnd();
        r.cpuNs = CuratorBench.cpuNanos() - cpu0;
        r.ops = changes;
        r.latNs = Samples.merge(List.of(lat));
        r.extra.put("sessions", 2);
        r.extra.put("total_ops", changes + warm);
        r.extra.put("recipe", b.recipe);
        r.extra.put("leaves", leaves);
        cache.close();
        return r;
    }
}
