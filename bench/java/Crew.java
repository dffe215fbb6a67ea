/* CuratorBench's worker threads: n threads started together, their first failure kept. */

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

interface Body {
    void run() throws Exception;
}

/** One step of worker i. */
interface Step {
    void run(int i) throws Exception;
}

/** Starts n threads running body(i) that wait on a common start gate. */
final class Crew {
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

    /**
     * The K-worker loop of contended and increments: k threads run warmOne(i) while the warm tickets last; once
     * all have warmed up, the measured part (b.markStart / b.markEnd around it): measuredOne(i) while the n
     * tickets last. The Result has the measured part's seconds and CPU time, and ops = n.
     */
    static Result warmThenMeasure(CuratorBench b, int k, int warm, int n, String name, Step warmOne,
                                  Step measuredOne) throws Exception {
        AtomicInteger warmLeft = new AtomicInteger(warm);
        AtomicInteger left = new AtomicInteger(n);
        CountDownLatch warmDone = new CountDownLatch(k);
        CountDownLatch go = new CountDownLatch(1);
        Crew crew = new Crew();
        crew.start(k, name, i -> () -> {
            while (warmLeft.getAndDecrement() > 0) {
                warmOne.run(i);
            }
            warmDone.countDown();
            go.await();
            while (left.getAndDecrement() > 0) {
                measuredOne.run(i);
            }
        });
        long deadline = b.deadline();
        while (!warmDone.await(100, TimeUnit.MILLISECONDS)) {
            crew.check();
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("warmup did not finish in time");
            }
        }
        b.markStart();
        long cpu0 = CuratorBench.cpuNanos();
        long t0 = System.nanoTime();
        go.countDown();
        crew.join(deadline);
        long t1 = System.nanoTime();
        b.markEnd();
        Result r = new Result();
        r.cpuNs = CuratorBench.cpuNanos() - cpu0;
        r.ops = n;
        r.seconds = (t1 - t0) / 1e9;
        return r;
    }
}
