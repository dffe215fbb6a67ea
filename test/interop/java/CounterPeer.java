/*
 * CounterPeer: a scriptable Apache Curator 5.x SharedCount / DistributedAtomicLong / DistributedAtomicValue user
 * for zkrecipes' interop
 * tests (test/integration/counters_interop_test.cpp), so that Java Curator and zkrecipes share one count or
 * one counter. It is compiled together with CuratorPeer.java and uses its output helpers.
 *
 * Usage:
 *   CounterPeer --connect HOSTS [--session-timeout-ms N] [--connection-timeout-ms N] [--lock LOCKPATH]
 *               [--semaphore SEMPATH] count|long|value PATH
 *
 *   count  a started SharedCount(client, PATH, 0); with --semaphore also an InterProcessSemaphoreV2(client,
 *          SEMPATH, that count), whose leases `run` takes
 *   long   DistributedAtomicLong(client, PATH, RetryNTimes(1000, 1)), promoted to an InterProcessMutex at
 *          LOCKPATH (PromotedToLock with RetryNTimes(1000, 1)) when --lock is given
 *   value  DistributedAtomicValue(client, PATH, RetryNTimes(1000, 1)); its bytes are written in hex, `-` for
 *          none (null or empty)
 *
 * Start-up: `ready`, or `error <message>` and exit status 2.
 *
 * Commands, one per line, each answered by exactly one line:
 *   get         -> `value <n>` (count: getCount(); long: get().postValue(); value: get().postValue() in hex)
 *   set <n>     -> `ok` (count: setCount; long: forceSet; value: trySet of hex bytes, `failed` if it did not
 *                  succeed)
 *   cas <e> <n> -> `cas true|false`: compareAndSet of hex bytes (value only)
 *   wait <n>    -> `value <n>` once getCount() is n (count only; `timeout <last>` after 30 s)
 *   incr <k>    -> `done <succeeded>` after k increments (long only)
 *   run         -> `running`: increments from a thread of its own until `stop` (long)
 *   stop        -> `stopped <succeeded> <uncertain> <post values>`: the increments of `run`, the number of them
 *                  whose outcome the peer cannot vouch for (one that threw, or during which the client's retry
 *                  policy was asked to retry a request: a retried write may have been applied twice), and the
 *                  post values of those that succeeded, comma-separated (`-` for none), each followed by `?`
 *                  when that increment is one of the uncertain
 *   run <holdMicros> <logfile>
 *               -> `running`: from a thread of its own, until `stop`, appends `TRY <epochNanos>` and asks for
 *                  a lease of the semaphore (count with --semaphore) for up to 200 ms; once granted, appends
 *                  `START <epochNanos> <czxid of the lease node> java`, holds it holdMicros, appends
 *                  `END <epochNanos> java` and returns it
 *   stop        -> `stopped <leases taken>` (semaphore), or as below (long)
 *   quit        -> `bye`, exit status 0 (end of stdin does the same)
 *   failing     -> `error <message>`
 */

import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.RetryPolicy;
import org.apache.curator.RetrySleeper;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicValue;
import org.apache.curator.framework.recipes.atomic.PromotedToLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.data.Stat;

public final class CounterPeer {
    public static void main(String[] args) throws Exception {
        CuratorPeer.CommandLine cl = new CuratorPeer.CommandLine(
            args, "CounterPeer --connect HOSTS [--lock LOCKPATH] [--semaphore SEMPATH] count|long|value PATH",
            "--lock", "--semaphore");
        if (cl.rest.size() != 2) {
            cl.fail("a recipe and one path are required");
        }
        String recipe = cl.rest.get(0);
        String path = cl.rest.get(1);
        // The client's policy, counting the retries it allows (a request retried after a connection loss).
        final AtomicLong clientRetries = new AtomicLong();
        final RetryPolicy base = new ExponentialBackoffRetry(100, 3);
        CuratorFramework client = cl.newClient(new RetryPolicy() {
            @Override
            public boolean allowRetry(int retryCount, long elapsedTimeMs, RetrySleeper sleeper) {
                clientRetries.incrementAndGet();
                return base.allowRetry(retryCount, elapsedTimeMs, sleeper);
            }
        });
        client.start();
        if (!client.blockUntilConnected(cl.connectionTimeoutMs, TimeUnit.MILLISECONDS)) {
            CuratorPeer.emit("error could not connect to " + cl.connect);
            System.exit(2);
        }
        SharedCount count = null;
        InterProcessSemaphoreV2 semaphore = null;
        DistributedAtomicLong number = null;
        DistributedAtomicValue bytes = null;
        try {
            if (recipe.equals("count")) {
                count = new SharedCount(client, path, 0);
                count.start();
                String semPath = cl.options.get("--semaphore");
                if (semPath != null) {
                    semaphore = new InterProcessSemaphoreV2(client, semPath, count);
                }
            } else if (recipe.equals("long")) {
                String lock = cl.options.get("--lock");
                number = lock == null
                    ? new DistributedAtomicLong(client, path, new RetryNTimes(1000, 1))
                    : new DistributedAtomicLong(client, path, new RetryNTimes(1000, 1),
                                                PromotedToLock.builder().lockPath(lock)
                                                    .retryPolicy(new RetryNTimes(1000, 1)).build());
            } else if (recipe.equals("value")) {
                bytes = new DistributedAtomicValue(client, path, new RetryNTimes(1000, 1));
            } else {
                cl.fail("unknown recipe " + recipe);
            }
        } catch (Throwable t) {
            CuratorPeer.emit("error " + CuratorPeer.oneLine(t));
            System.exit(2);
        }
        final DistributedAtomicLong counter = number;
        final AtomicBoolean running = new AtomicBoolean();
        final List<String> runValues = new ArrayList<>();
        final long[] runUncertain = {0};
        Thread runner = null;
        CuratorPeer.emit("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split("\\s+");
            String cmd = w[0];
            try {
                if (cmd.equals("quit")) {
                    break;
                } else if (cmd.equals("get") && bytes != null) {
                    CuratorPeer.emit("value " + hex(bytes.get().postValue()));
                } else if (cmd.equals("set") && bytes != null) {
                    CuratorPeer.emit(bytes.trySet(unhex(w[1])).succeeded() ? "ok" : "failed");
                } else if (cmd.equals("cas")) {
                    CuratorPeer.emit("cas " + bytes.compareAndSet(unhex(w[1]), unhex(w[2])).succeeded());
                } else if (cmd.equals("get")) {
                    CuratorPeer.emit("value " + (count != null ? count.getCount() : number.get().postValue()));
                } else if (cmd.equals("set")) {
                    if (count != null) {
                        count.setCount(Integer.parseInt(w[1]));
                    } else {
                        number.forceSet(Long.parseLong(w[1]));
                    }
                    CuratorPeer.emit("ok");
                } else if (cmd.equals("wait")) {
                    int want = Integer.parseInt(w[1]);
                    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (count.getCount() != want && System.nanoTime() < until) {
                        Thread.sleep(10);
                    }
                    int got = count.getCount();
                    CuratorPeer.emit((got == want ? "value " : "timeout ") + got);
                } else if (cmd.equals("run") && semaphore != null) {
                    running.set(true);
                    runner = leaseRunner(client, semaphore, cl.options.get("--semaphore"), Long.parseLong(w[1]),
                                         w[2], running, runValues);
                    runner.start();
                    CuratorPeer.emit("running");
                } else if (cmd.equals("stop") && semaphore != null) {
                    running.set(false);
                    if (runner != null) {
                        runner.join();
                    }
                    synchronized (runValues) {
                        CuratorPeer.emit("stopped " + runValues.size());
                    }
                } else if (cmd.equals("run")) {
                    running.set(true);
                    runner = new Thread(() -> {
                        while (running.get()) {
                            long retriesBefore = clientRetries.get();
                            boolean threw = false;
                            Long post = null;
                            try {
                                var r = counter.increment();
                                if (r.succeeded()) {
                                    post = r.postValue();
                                }
                            } catch (Exception e) {
                                threw = true;
                            }
                            boolean uncertain = threw || clientRetries.get() != retriesBefore;
                            synchronized (runValues) {
                                if (post != null) {
                                    runValues.add(post + (uncertain ? "?" : ""));
                                }
                                if (uncertain) {
                                    ++runUncertain[0];
                                }
                            }
                        }
                    });
                    runner.start();
                    CuratorPeer.emit("running");
                } else if (cmd.equals("stop")) {
                    running.set(false);
                    if (runner != null) {
                        runner.join();
                    }
                    StringBuilder values = new StringBuilder();
                    synchronized (runValues) {
                        for (String v : runValues) {
                            values.append(values.length() == 0 ? "" : ",").append(v);
                        }
                        CuratorPeer.emit("stopped " + runValues.size() + " " + runUncertain[0] + " "
                                         + (values.length() == 0 ? "-" : values.toString()));
                    }
                } else if (cmd.equals("incr")) {
                    int k = Integer.parseInt(w[1]);
                    int ok = 0;
                    for (int i = 0; i < k; ++i) {
                        if (number.increment().succeeded()) {
                            ++ok;
                        }
                    }
                    CuratorPeer.emit("done " + ok);
                } else {
                    CuratorPeer.emit("error unknown command: " + cmd);
                }
            } catch (Throwable t) {
                CuratorPeer.emit("error " + cmd + ": " + CuratorPeer.oneLine(t));
            }
        }
        if (count != null) {
            count.close();
        }
        client.close();
        CuratorPeer.emit("bye");
        System.exit(0);
    }

    /**
     * The `run` of a semaphore: leases taken, logged, held and returned one after another until `running` is
     * false; each lease taken adds its node name to `taken`. A failure ends the thread with an `error` line.
     */
    static Thread leaseRunner(CuratorFramework client, InterProcessSemaphoreV2 semaphore, String semPath,
                              long holdMicros, String logfile, AtomicBoolean running, List<String> taken) {
        return new Thread(() -> {
            try (OutputStream log = new FileOutputStream(logfile, true)) {
                while (running.get()) {
                    log.write(("TRY " + CuratorPeer.epochNanos() + "\n").getBytes(StandardCharsets.US_ASCII));
                    Lease lease = semaphore.acquire(200, TimeUnit.MILLISECONDS);
                    if (lease == null) {
                        continue;
                    }
                    try {
                        long start = CuratorPeer.epochNanos();
                        String node = CuratorPeer.fullLeasePath(semPath, lease.getNodeName());
                        Stat st = client.checkExists().forPath(node);
                        log.write(("START " + start + " " + (st != null ? st.getCzxid() : -1) + " java\n")
                                      .getBytes(StandardCharsets.US_ASCII));
                        Thread.sleep(holdMicros / 1000, (int) (holdMicros % 1000) * 1000);
                        long end = CuratorPeer.epochNanos();
                        log.write(("END " + end + " java\n").getBytes(StandardCharsets.US_ASCII));
                        synchronized (taken) {
                            taken.add(lease.getNodeName());
                        }
                    } finally {
                        lease.close();
                    }
                }
            } catch (Throwable t) {
                CuratorPeer.emit("error run: " + CuratorPeer.oneLine(t));
            }
        });
    }

    /** Bytes in lower-case hex, `-` for null or none. */
    static String hex(byte[] b) {
        if (b == null || b.length == 0) {
            return "-";
        }
        StringBuilder out = new StringBuilder();
        for (byte x : b) {
            out.append(String.format("%02x", x & 0xff));
        }
        return out.toString();
    }

    /** The bytes of `hex`, none for `-`. */
    static byte[] unhex(String hex) {
        if (hex.equals("-")) {
            return new byte[0];
        }
        byte[] out = new byte[hex.length() / 2];
        for (int i = 0; i < out.length; ++i) {
            out[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }
}
