/* CuratorBench's increments scenario: K sessions increment one DistributedAtomicLong (issue 40). */

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.atomic.PromotedToLock;
import org.apache.curator.retry.RetryNTimes;

/**
 * increments: K [8] sessions, one thread each, looping increment() on one DistributedAtomicLong at P until
 * N [2000] increments are done in total; latency = one increment, its retries included. --mode optimistic:
 * RetryNTimes(1000, 1 ms); --mode promoted: one optimistic try (RetryNTimes(0, 0)), then PromotedToLock on
 * P-lock under that same policy (zkr_bench's scenarios/increments.cpp does the same). The counter must equal
 * warmup + N at the end, else the run fails.
 */
final class CounterScenario {
    private final CuratorBench b;

    CounterScenario(CuratorBench b) {
        this.b = b;
    }

    static RetryPolicy quickRetries() {
        return new RetryNTimes(1000, 1);
    }

    DistributedAtomicLong counter(CuratorFramework c, boolean promoted) {
        if (!promoted) {
            return new DistributedAtomicLong(c, b.path, quickRetries());
        }
        PromotedToLock lock = PromotedToLock.builder().lockPath(b.path + "-lock").retryPolicy(quickRetries()).build();
        return new DistributedAtomicLong(c, b.path, new RetryNTimes(0, 0), lock);
    }

    static AtomicValue<Long> increment(DistributedAtomicLong c) throws Exception {
        AtomicValue<Long> v = c.increment();
        if (!v.succeeded()) {
            throw new IllegalStateException("increment gave up after its retries");
        }
        return v;
    }

    Result increments() throws Exception {
        int k = Math.max(1, CuratorBench.or(b.clients, 8));
        int n = CuratorBench.or(b.ops, 2000);
        int warm = CuratorBench.or(b.warmup, 100);
        boolean promoted = b.mode.equals("promoted");
        List<DistributedAtomicLong> counters = new ArrayList<>();
        for (int i = 0; i < k; ++i) {
            counters.add(counter(b.newSession(), promoted));
        }
        long startValue = counters.get(0).get().postValue();
        List<Samples> lats = new ArrayList<>();
        for (int i = 0; i < k; ++i) {
            lats.add(new Samples());
        }
        AtomicLong optimisticTries = new AtomicLong();
        AtomicLong promotedTries = new AtomicLong();
        Result r = Crew.warmThenMeasure(b, k, warm, n, "incrementer", i -> increment(counters.get(i)), i -> {
            long s = System.nanoTime();
            AtomicValue<Long> v = increment(counters.get(i));
            lats.get(i).add(System.nanoTime() - s);
            optimisticTries.addAndGet(v.getStats().getOptimisticTries());
            promotedTries.addAndGet(v.getStats().getPromotedLockTries());
        });
        long finalValue = counters.get(0).get().postValue();
        if (finalValue - startValue != (long) warm + n) {
            throw new IllegalStateException("counter went from " + startValue + " to " + finalValue + " after "
                                            + (warm + n) + " increments");
        }
        r.latNs = Samples.merge(lats);
        r.extra.put("sessions", k);
        r.extra.put("total_ops", n + warm);
        r.extra.put("mode", b.mode);
        r.extra.put("optimistic_tries_per_op", n > 0 ? (double) optimisticTries.get() / n : 0.0);
        r.extra.put("promoted_tries_per_op", n > 0 ? (double) promotedTries.get() / n : 0.0);
        r.extra.put("counter_checked", finalValue - startValue);
        return r;
    }
}
