/*
 * ChurnPeer: an Apache Curator 5.x writer that churns a tree for zkrecipes' cache fault test
 * (test/integration/cache_fault_test.cpp): while running, it creates, sets and deletes nodes chosen at random
 * (seeded) among ROOT/a<i> (i < 10), ROOT/a<i>/b<j> (j < 6) and ROOT/a<i>/b<j>/c<k> (k < 5), the same shape as
 * the test's C++ writers. Errors of single operations (a missing or present node, a non-empty parent, a lost
 * connection during a fault) are counted and ignored: the writer keeps going. Compiled with CuratorPeer.java
 * and uses its command line and output helpers.
 *
 * Usage:  ChurnPeer --connect HOSTS [--session-timeout-ms N] [--connection-timeout-ms N] [--seed S] ROOT
 * Start-up: `ready`, or `error <message>` and exit status 2.
 * Commands, one per line, each answered by exactly one line:
 *   run      -> `running` (starts or resumes the writes)
 *   pause    -> `paused <ops>` once no operation is in flight
 *   quit     -> `bye <ops> <errors>`, exit status 0 (end of stdin does the same)
 */

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;

public final class ChurnPeer {
    private final CuratorFramework client;
    private final String root;
    private final Random random;
    private boolean running; // guarded by this
    private boolean inFlight; // guarded by this
    private long ops;
    private long errors;

    ChurnPeer(CuratorFramework client, String root, long seed) {
        this.client = client;
        this.root = root;
        this.random = new Random(seed);
    }

    String randomPath() {
        String p = root + "/a" + random.nextInt(10);
        int depth = random.nextInt(3);
        if (depth >= 1) {
            p += "/b" + random.nextInt(6);
        }
        if (depth >= 2) {
            p += "/c" + random.nextInt(5);
        }
        return p;
    }

    void oneOp() {
        String p = randomPath();
        byte[] data = ("java-" + ops).getBytes(StandardCharsets.US_ASCII);
        try {
            int op = random.nextInt(10);
            if (op < 4) {
                client.create().creatingParentsIfNeeded().forPath(p, data);
            } else if (op < 8) {
                client.setData().forPath(p, data);
            } else {
                client.delete().forPath(p);
            }
        } catch (Exception e) {
            ++errors; // NoNode, NodeExists, NotEmpty, or a fault's connection loss
        }
        ++ops;
    }

    void loop() {
        for (;;) {
            synchronized (this) {
                while (!running) {
                    inFlight = false;
                    notifyAll();
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                inFlight = true;
            }
            oneOp();
        }
    }

    synchronized void run() {
        running = true;
        notifyAll();
    }

    synchronized long pause() throws InterruptedException {
        running = false;
        while (inFlight) {
            wait();
        }
        return ops;
    }

    public static void main(String[] args) throws Exception {
        CuratorPeer.CommandLine cl = new CuratorPeer.CommandLine(
            args, "ChurnPeer --connect HOSTS [--seed S] ROOT", "--seed");
        if (cl.rest.size() != 1) {
            cl.fail("one root path is required");
        }
        CuratorFramework client = cl.newClient();
        client.start();
        if (!client.blockUntilConnected(cl.connectionTimeoutMs, TimeUnit.MILLISECONDS)) {
            CuratorPeer.emit("error could not connect to " + cl.connect);
            System.exit(2);
        }
        long seed = Long.parseLong(cl.options.getOrDefault("--seed", "1"));
        ChurnPeer peer = new ChurnPeer(client, cl.rest.get(0), seed);
        Thread writer = new Thread(peer::loop, "churn");
        writer.setDaemon(true);
        writer.start();
        CuratorPeer.emit("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String cmd = line.trim();
            if (cmd.equals("quit")) {
                break;
            } else if (cmd.equals("run")) {
                peer.run();
                CuratorPeer.emit("running");
            } else if (cmd.equals("pause")) {
                CuratorPeer.emit("paused " + peer.pause());
            } else {
                CuratorPeer.emit("error unknown command " + cmd);
            }
        }
        long ops = peer.pause();
        CuratorPeer.emit("bye " + ops + " " + peer.errors);
        client.close();
        System.exit(0);
    }
}
