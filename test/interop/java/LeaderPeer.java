/*
 * LeaderPeer: a scriptable Apache Curator 5.x leader-election participant for zkrecipes' interop tests.
 *
 * The C++ integration tests start this program as a child process (test/integration/curator_peer.hpp, main
 * class LeaderPeer) and drive it through a line protocol, so that Java Curator participants and zkrecipes
 * ones take part in one election. It is compiled together with CuratorPeer.java and uses its output helpers.
 *
 * Usage:
 *   LeaderPeer --connect HOSTS [--session-timeout-ms N] [--connection-timeout-ms N] [--id ID] RECIPE PATH
 *
 *   RECIPE is one of
 *     latch      LeaderLatch(client, PATH, ID) with a listener
 *     selector   LeaderSelector(client, PATH, listener) with setId(ID) and autoRequeue(); the listener is a
 *                LeaderSelectorListenerAdapter, so SUSPENDED and LOST end the term as Curator users usually have it
 *
 * Start-up: `ready <session id as 0x hex>`, or `error <message>` and exit status 2.
 *
 * Commands, one per line, each answered by exactly one line:
 *   start            -> `started`
 *   close            -> `closed`; a term in progress ends first (its `not-leader` line comes before `closed`),
 *                       then the recipe is closed (latch: CloseMode.SILENT)
 *   participants     -> `participants <id>:<1|0>,...` in Curator's order, 1 marking the leader
 *   leader           -> `current-leader <id>` (`current-leader` alone when Curator reports no leader)
 *   has-leadership   -> `has-leadership true|false`
 *   expire           -> `expired` (ZooKeeper's Testable.injectSessionExpiration: the client believes its session
 *                       expired and starts a new one; the server keeps the old session until it times out)
 *   session          -> `session <0x hex>`
 *   ping             -> `pong`
 *   quit             -> `bye`, exit status 0 (end of stdin does the same)
 *   anything failing -> `error <message>`
 *
 * Asynchronous lines (their first words never start an answer):
 *   state <S>                                   a Curator connection state
 *   leader <token> <epochNanos> <node> <ownerHex> <sessionHex>
 *                                               a term begins: the time Curator said so, our node, its czxid as
 *                                               the fencing token (-1 if it is gone), the session that owns the
 *                                               node and our session, both read right after the grant. An owner
 *                                               other than our session is Curator 5.4's CURATOR-696: leadership
 *                                               claimed on the node of a dead session.
 *   write <token> <epochNanos>                  every 20 ms during a term: a write to the test's fenced resource
 *   not-leader <epochNanos>                     the term ends (the time Curator said so, or `close` began)
 */

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.data.Stat;

public final class LeaderPeer {

    private final CuratorFramework client;
    private final String recipe;
    private final String path;
    private final String id;

    private LeaderLatch latch;
    private LeaderSelector selector;
    private java.util.function.Supplier<String> selectorNode;

    /** A term: opened when Curator grants leadership, announced once its node has been looked up. */
    private static final class Term {
        final long startNanos;
        final String node;
        boolean announced;      // guarded by the peer
        long endNanos = -1;     // guarded by the peer; >= 0 once the term ended
        long token = -1;

        Term(long startNanos, String node) {
            this.startNanos = startNanos;
            this.node = node;
        }
    }

    /** The open term, or null between terms. */
    private Term term; // guarded by this
    /** The token the writer uses: the open, announced term's, or -1. */
    private volatile long termToken = -1;
    private volatile boolean closing;

    /** Looks terms up and prints their lines in grant order (the latch's callbacks must not block). */
    private final ScheduledExecutorService termThread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "leader-peer-term");
        t.setDaemon(true);
        return t;
    });

    private LeaderPeer(CuratorFramework client, String recipe, String path, String id) {
        this.client = client;
        this.recipe = recipe;
        this.path = path;
        this.id = id;
    }

    private String sessionHex() throws Exception {
        return "0x" + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId());
    }

    // ---- terms

    /** Curator said we lead, now, on `node`: opens a term (the caller then calls `announce` on it). */
    private synchronized Term openTerm(String node) {
        if (term != null) {
            return null; // already leading: Curator reports a change only
        }
        term = new Term(CuratorPeer.epochNanos(), node);
        return term;
    }

    /** Reads the term's node (its czxid is the token; its owner against our session) and prints its lines. */
    private void announce(Term t) {
        long owner = 0;
        String session = "0x0";
        try {
            session = sessionHex();
            Stat st = t.node == null ? null : client.checkExists().forPath(t.node);
            if (st != null) {
                t.token = st.getCzxid();
                owner = st.getEphemeralOwner();
            }
        } catch (Throwable e) {
            CuratorPeer.emit("error term lookup: " + CuratorPeer.oneLine(e));
        }
        synchronized (this) {
            CuratorPeer.emit("leader " + t.token + " " + t.startNanos + " " + t.node + " 0x"
                             + Long.toHexString(owner) + " " + session);
            t.announced = true;
            if (t.endNanos >= 0) {
                CuratorPeer.emit("not-leader " + t.endNanos); // it ended while we looked the node up
            } else {
                termToken = t.token;
            }
        }
    }

    /** The open term, if any, ends now; no write follows its `not-leader` line. */
    private synchronized void endTerm() {
        termToken = -1;
        if (term == null) {
            return;
        }
        Term t = term;
        term = null;
        t.endNanos = CuratorPeer.epochNanos();
        if (t.announced) {
            CuratorPeer.emit("not-leader " + t.endNanos);
        }
    }

    /** Under the peer's lock, so that no write line follows the term's `not-leader` line. */
    private synchronized void writeOnce() {
        long t = termToken;
        if (t >= 0) {
            CuratorPeer.emit("write " + t + " " + CuratorPeer.epochNanos());
        }
    }

    // ---- recipes

    private void create() throws Exception {
        if (recipe.equals("latch")) {
            latch = new LeaderLatch(client, path, id);
            latch.addListener(new LeaderLatchListener() {
                @Override
                public void isLeader() {
                    Term t = openTerm(latch.getOurPath());
                    if (t != null) {
                        termThread.execute(() -> announce(t));
                    }
                }

                @Override
                public void notLeader() {
                    endTerm();
                }
            });
        } else if (recipe.equals("selector")) {
            selector = new LeaderSelector(client, path, new LeaderSelectorListenerAdapter() {
                @Override
                public void takeLeadership(CuratorFramework c) throws Exception {
                    Term t = openTerm(selectorNode.get());
                    if (t != null) {
                        announce(t);
                    }
                    try {
                        while (!closing) {
                            Thread.sleep(20);
                        }
                    } finally {
                        endTerm(); // before Curator releases the mutex
                    }
                }
            });
            selector.setId(id);
            selector.autoRequeue();
            java.lang.reflect.Field f = LeaderSelector.class.getDeclaredField("mutex");
            f.setAccessible(true);
            selectorNode = CuratorPeer.reflectLockPath((InterProcessMutex) f.get(selector));
        } else {
            throw new IllegalArgumentException("unknown recipe " + recipe + " (latch or selector)");
        }
    }

    private void start() throws Exception {
        if (latch != null) {
            latch.start();
        } else {
            selector.start();
        }
    }

    private void close() throws Exception {
        closing = true;
        endTerm();
        if (latch != null) {
            latch.close(LeaderLatch.CloseMode.SILENT);
        } else {
            selector.close();
        }
    }

    private String participants() throws Exception {
        List<String> out = new ArrayList<>();
        for (Participant p : latch != null ? latch.getParticipants() : selector.getParticipants()) {
            out.add(p.getId() + ":" + (p.isLeader() ? "1" : "0"));
        }
        return String.join(",", out);
    }

    private String leader() throws Exception {
        Participant p = latch != null ? latch.getLeader() : selector.getLeader();
        return p.getId();
    }

    private boolean hasLeadership() {
        return latch != null ? latch.hasLeadership() : selector.hasLeadership();
    }

    // ---- the command loop

    private void serve() throws Exception {
        java.io.BufferedReader in = new java.io.BufferedReader(
            new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String cmd = line.trim();
            if (cmd.isEmpty()) {
                continue;
            }
            try {
                switch (cmd) {
                    case "start":
                        start();
                        CuratorPeer.emit("started");
                        break;
                    case "close":
                        close();
                        CuratorPeer.emit("closed");
                        break;
                    case "participants":
                        CuratorPeer.emit(("participants " + participants()).trim());
                        break;
                    case "leader":
                        CuratorPeer.emit(("current-leader " + leader()).trim());
                        break;
                    case "has-leadership":
                        CuratorPeer.emit("has-leadership " + hasLeadership());
                        break;
                    case "expire":
                        client.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
                        CuratorPeer.emit("expired");
                        break;
                    case "session":
                        CuratorPeer.emit("session " + sessionHex());
                        break;
                    case "ping":
                        CuratorPeer.emit("pong");
                        break;
                    case "quit":
                        return;
                    default:
                        CuratorPeer.emit("error unknown command: " + cmd);
                }
            } catch (Throwable t) {
                CuratorPeer.emit("error " + cmd + ": " + CuratorPeer.oneLine(t));
            }
        }
    }

    public static void main(String[] args) {
        CuratorPeer.CommandLine cl = new CuratorPeer.CommandLine(
            args, "LeaderPeer --connect HOSTS [--session-timeout-ms N] [--connection-timeout-ms N] [--id ID]"
                  + " latch|selector PATH", "--id");
        if (cl.rest.size() != 2) {
            cl.fail("a recipe and one path are required");
        }
        String connect = cl.connect;
        int connectionTimeoutMs = cl.connectionTimeoutMs;
        String id = cl.options.getOrDefault("--id", "");
        List<String> rest = cl.rest;
        CuratorFramework client = cl.newClient();
        LeaderPeer peer = new LeaderPeer(client, rest.get(0), rest.get(1), id);
        try {
            peer.create();
        } catch (Throwable t) {
            CuratorPeer.emit("error " + CuratorPeer.oneLine(t));
            System.exit(2);
            return;
        }
        client.start();
        peer.termThread.scheduleAtFixedRate(peer::writeOnce, 20, 20, TimeUnit.MILLISECONDS);
        try {
            if (!client.blockUntilConnected(connectionTimeoutMs, TimeUnit.MILLISECONDS)) {
                CuratorPeer.emit("error could not connect to " + connect + " within " + connectionTimeoutMs + " ms");
                System.exit(2);
            }
            CuratorPeer.emit("ready " + peer.sessionHex());
            peer.serve();
            if (!peer.closing) {
                peer.close();
            }
        } catch (Throwable t) {
            CuratorPeer.emit("error " + CuratorPeer.oneLine(t));
        }
        peer.termThread.shutdownNow();
        client.close();
        CuratorPeer.emit("bye");
        System.exit(0);
    }
}
