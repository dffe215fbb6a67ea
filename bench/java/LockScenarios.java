/* CuratorBench's lock scenarios (what each measures: see CuratorBench.java's first comment). */

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;

/** CuratorBench's lock scenarios: uncontended, semaphore-mutex, multilock, contended, drain, rwlock. */
final class LockScenarios {
    private final CuratorBench b;

    LockScenarios(CuratorBench b) {
        this.b = b;
    }

    /** N timed pairs on one lock (uncontended, semaphore-mutex, multilock). */
    Result pairs(InterProcessLock lock, int n, int warm) throws Exception {
        for (int i = 0; i < warm; ++i) {
            lock.acquire();
            lock.release();
        }
        Samples lat = new Samples();
        b.markStart();
        long cpu0 = CuratorBench.cpuNanos();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; ++i) {
            long s = System.nanoTime();
            lock.acquire();
            lock.release();
            lat.add(System.nanoTime() - s);
        }
        long t1 = System.nanoTime();
        b.markEnd();
        Result r = new Result();
        r.cpuNs = CuratorBench.cpuNanos() - cpu0;
        r.ops = n;
        r.seconds = (t1 - t0) / 1e9;
        r.latNs = Samples.merge(List.of(lat));
        r.extra.put("total_ops", n + warm);
        return r;
    }

    Result uncontended() throws Exception {
        CuratorFramework c = b.newSession();
        Result r = pairs(new InterProcessMutex(c, b.path), CuratorBench.or(b.ops, 2000),
                         CuratorBench.or(b.warmup, 100));
        r.extra.put("sessions", 1);
        return r;
    }

    Result semaphoreMutex() throws Exception {
        CuratorFramework c = b.newSession();
        Result r = pairs(new InterProcessSemaphoreMutex(c, b.path), CuratorBench.or(b.ops, 1000),
                         CuratorBench.or(b.warmup, 100));
        r.extra.put("sessions", 1);
        return r;
    }

    Result multilock() throws Exception {
        int k = Math.max(1, CuratorBench.or(b.clients, 4));
        CuratorFramework c = b.newSession();
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < k; ++i) {
            paths.add(ZKPaths.makePath(b.path, Integer.toString(i)));
        }
        Result r = pairs(new InterProcessMultiLock(c, paths), CuratorBench.or(b.ops, 500),
                         CuratorBench.or(b.warmup, 100));
        r.extra.put("sessions", 1);
        r.extra.put("locks", k);
        return r;
    }

    Result contended() throws Exception {
        int k = Math.max(1, CuratorBench.or(b.clients, 8));
        int n = CuratorBench.or(b.ops, 2000);
        int warm = CuratorBench.or(b.warmup, 100);
        List<CuratorFramework> cs = new ArrayList<>();
        for (int i = 0; i < k; ++i) {
            cs.add(b.newSession());
        }
        List<InterProcessMutex> locks = new ArrayList<>();
        for (CuratorFramework c : cs) {
            locks.add(new InterProcessMutex(c, b.path));
        }
        List<Samples> lats = new ArrayList<>();
        for (int i = 0; i < k; ++i) {
            lats.add(new Samples());
        }
        Result r = Crew.warmThenMeasure(b, k, warm, n, "contender", i -> {
            InterProcessMutex m = locks.get(i);
            m.acquire();
            m.release();
        }, i -> {
            InterProcessMutex m = locks.get(i);
            long s = System.nanoTime();
            m.acquire();
            lats.get(i).add(System.nanoTime() - s);
            m.release();
        });
        r.latNs = Samples.merge(lats);
        r.extra.put("sessions", k);
        r.extra.put("total_ops", n + warm);
        return r;
    }

    Result drain() throws Exception {
        int w = Math.max(1, CuratorBench.or(b.waiters, 200));
        int k = Math.max(1, Math.min(w, CuratorBench.or(b.clients, 8)));
        CuratorFramework holderSession = b.newSession();
        List<CuratorFramework> cs = new ArrayList<>();
        for (int i = 0; i < k; ++i) {
            cs.add(b.newSession());
        }
        InterProcessMutex holder = new InterProcessMutex(holderSession, b.path);
        holder.acquire();

        AtomicInteger order = new AtomicInteger();
        long[] acquiredAt = new long[w];   // by acquisition order
        long[] seqByOrder = new long[w];   // sequence number of the i-th acquirer
        Crew crew = new Crew();
        crew.start(w, "waiter", i -> () -> {
            CuratorBench.NamedMutex m = new CuratorBench.NamedMutex(cs.get(i % k), b.path);
            m.acquire();
            int pos = order.getAndIncrement(); // exact: we hold the lock
            acquiredAt[pos] = System.nanoTime();
            String node = m.lockPath();
            seqByOrder[pos] = Long.parseLong(node.substring(node.length() - 10));
            m.release();
        });

        // Wait until all W waiters' nodes exist (plus the holder's).
        long deadline = b.deadline();
        while (true) {
            crew.check();
            int have;
            try {
                have = holderSession.getChildren().forPath(b.path).size();
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
        b.sampleThreads(); // every waiter's thread is alive and blocked in acquire()
        b.markStart();
        long cpu0 = CuratorBench.cpuNanos();
        long t0 = System.nanoTime();
        holder.release();
        crew.join(deadline);
        long t1 = System.nanoTime();
        b.markEnd();

        Result r = new Result();
        r.cpuNs = CuratorBench.cpuNanos() - cpu0;
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
        long durationMs = CuratorBench.or(b.ops, 5000);
        long warmMs = CuratorBench.or(b.warmup, 500);
        List<InterProcessMutex> locks = new ArrayList<>();
        for (int i = 0; i < readers + 1; ++i) {
            InterProcessReadWriteLock rw = new InterProcessReadWriteLock(b.newSession(), b.path);
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
        b.markStart();
        long cpu0 = CuratorBench.cpuNanos();
        long t0 = System.nanoTime();
        measuring.set(true);
        Thread.sleep(durationMs);
        stop.set(true);
        long t1 = System.nanoTime();
        b.markEnd();
        long cpu1 = CuratorBench.cpuNanos();
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
        r.extra.put("read_p50_us", CuratorBench.percentileUs(readLat, 0.50));
        r.extra.put("read_p99_us", CuratorBench.percentileUs(readLat, 0.99));
        r.extra.put("write_p50_us", CuratorBench.percentileUs(writeLat, 0.50));
        r.extra.put("write_p99_us", CuratorBench.percentileUs(writeLat, 0.99));
        r.extra.put("timeouts", timeoutTotal);
        r.extra.put("total_ops", all.length + warmTotal);
        return r;
    }
}
