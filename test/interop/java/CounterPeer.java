/*
 * CounterPeer: a scriptable Apache Curator 5.x SharedCount / DistributedAtomicLong user for zkrecipes' interop
 * tests (test/integration/counters_interop_test.cpp), so that Java Curator and zkrecipes share one count or
 * one counter. It is compiled together with CuratorPeer.java and uses its output helpers.
 *
 * Usage:
 *   CounterPeer --connect HOSTS [--session-timeout-ms N] [--connection-timeout-ms N] [--lock LOCKPATH]
 *               count|long PATH
 *
 *   count  a started SharedCount(client, PATH, 0)
 *   long   DistributedAtomicLong(client, PATH, RetryNTimes(1000, 1)), promoted to an InterProcessMutex at
 *          LOCKPATH (PromotedToLock with RetryNTimes(1000, 1)) when --lock is given
 *
 * Start-up: `ready`, or `error <message>` and exit status 2.
 *
 * Commands, one per line, each answered by exactly one line:
 *   get         -> `value <n>` (count: getCount(); long: get().postValue())
 *   set <n>     -> `ok` (count: setCount; long: forceSet)
 *   wait <n>    -> `value <n>` once getCount() is n (count only; `timeout <last>` after 30 s)
 *   incr <k>    -> `done <succeeded>` after k increments (long only)
 *   quit        -> `bye`, exit status 0 (end of stdin does the same)
 *   failing     -> `error <message>`
 */

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.atomic.PromotedToLock;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.retry.RetryNTimes;

public final class CounterPeer {
    public static void main(String[] args) throws Exception {
        CuratorPeer.CommandLine cl = new CuratorPeer.CommandLine(
            args, "CounterPeer --connect HOSTS [--lock LOCKPATH] count|long PATH", "--lock");
        if (cl.rest.size() != 2) {
            cl.fail("a recipe and one path are required");
        }
        String recipe = cl.rest.get(0);
        String path = cl.rest.get(1);
        CuratorFramework client = cl.newClient();
        client.start();
        if (!client.blockUntilConnected(cl.connectionTimeoutMs, TimeUnit.MILLISECONDS)) {
            CuratorPeer.emit("error could not connect to " + cl.connect);
            System.exit(2);
        }
        SharedCount count = null;
        DistributedAtomicLong number = null;
        try {
            if (recipe.equals("count")) {
                count = new SharedCount(client, path, 0);
                count.start();
            } else if (recipe.equals("long")) {
                String lock = cl.options.get("--lock");
                number = lock == null
                    ? new DistributedAtomicLong(client, path, new RetryNTimes(1000, 1))
                    : new DistributedAtomicLong(client, path, new RetryNTimes(1000, 1),
                                                PromotedToLock.builder().lockPath(lock)
                                                    .retryPolicy(new RetryNTimes(1000, 1)).build());
            } else {
                cl.fail("unknown recipe " + recipe);
            }
        } catch (Throwable t) {
            CuratorPeer.emit("error " + CuratorPeer.oneLine(t));
            System.exit(2);
        }
        CuratorPeer.emit("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split("\\s+");
            String cmd = w[0];
            try {
                if (cmd.equals("quit")) {
                    break;
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
}
