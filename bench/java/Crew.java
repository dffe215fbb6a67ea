/* CuratorBench's worker threads: n threads started together, their first failure kept. */

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

interface Body {
    void run() throws Exception;
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
}
