/*
 * CuratorPeer: a scriptable Apache Curator 5.x lock client for zkrecipes' interop tests.
 *
 * The C++ integration tests start this program as a child process and drive it through a line
 * protocol, so that a Java Curator client and the C++ library contend on the same lock paths.
 *
 * Usage:
 *   curator-peer --connect HOSTS [--session-timeout-ms N] [--connection-timeout-ms N] RECIPE PATH...
 *
 *   RECIPE is one of
 *     mutex             InterProcessMutex(PATH)
 *     semaphore-mutex   InterProcessSemaphoreMutex(PATH)
 *     read | write      InterProcessReadWriteLock(PATH).readLock() / .writeLock()
 *     multi             InterProcessMultiLock over one InterProcessMutex per PATH (two or more paths allowed)
 *     semaphore:<N>     InterProcessSemaphoreV2(PATH, N); every `acquire` takes one more lease
 *
 * Start-up: the peer connects (waiting at most --connection-timeout-ms, default 10000) and prints
 *   `ready <session id as 0x hex>`; on failure it prints `error <message>` and exits with status 2.
 *
 * Protocol: one command per line on stdin, each answered by exactly one line on stdout (flushed).
 *   acquire                 -> `acquired <node>` (blocks until held)
 *   acquire <ms>            -> `acquired <node>` or `timeout`
 *   release                 -> `released` (mutex: one level of reentrancy; semaphore: the newest lease)
 *   revocable               -> `revocable` ; makes the lock revocable (call BEFORE acquire, as in Curator).
 *                              A revocation request then prints `revoke-requested <node>` and the lock is
 *                              released, which prints `revoke-released <node>` (both asynchronous).
 *   loop <n> <holdMicros> <logfile>
 *                           -> `done <n>` ; n times: acquire, append `START <epochNanos> <czxid> java`,
 *                              hold holdMicros, append `END <epochNanos> java`, release.
 *   participants            -> `participants <full path>,<full path>,...` sorted by sequence number, or
 *                              just `participants` when there are none. mutex: the lock's contenders;
 *                              read/write: every child of PATH (readers and writers); semaphore and
 *                              semaphore-mutex: PATH/leases/*; multi: the contenders of each path in turn.
 *   revoke <fullNodePath>   -> `revoke-sent` (Revoker.attemptRevoke)
 *   expire                  -> `expired` (ZooKeeper Testable.injectSessionExpiration on our handle)
 *   session                 -> `session <0x hex session id>`
 *   ping                    -> `pong`
 *   quit                    -> `bye`, then exit status 0 (end of stdin does the same)
 *   anything failing        -> `error <message>` (the peer never exits on an error)
 *
 * <node> is the full path of our lock node (mutex, read, write), of our lease node (semaphore,
 * semaphore-mutex), or a comma-separated list of our lock nodes, one per path (multi).
 *
 * Ordering: acquire, release, revocable and loop run one after another on a single "lock thread"
 * (Curator's mutexes are owned by a thread), so their answers come in the order the commands were
 * sent. The other commands (participants, revoke, expire, session, ping) are answered at once, even
 * while an `acquire` is still blocked. `quit` first lets the lock thread finish what was sent before
 * it (at most 3 s), then interrupts it (a blocked acquire then answers `error ...`), closes the
 * client, answers `bye` and exits.
 *
 * Asynchronous lines can appear at any time, between answers; their first word is one of
 *   state             `state <CONNECTED|SUSPENDED|RECONNECTED|LOST|READ_ONLY>` (Curator connection states)
 *   revoke-requested  `revoke-requested <node>`
 *   revoke-released   `revoke-released <node>` (or `revoke-released error <message>`)
 * No answer line starts with one of these words.
 *
 * Built by test/interop/CMakeLists.txt with plain javac against the Debian Curator jars.
 */

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

public final class CuratorPeer {

    // ------------------------------------------------------------------------------------------
    // Output: every line is written whole and flushed, from any thread.

    private static final PrintStream OUT =
        new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);

    static void emit(String line) {
        synchronized (OUT) {
            OUT.print(line);
            OUT.print('\n');
            OUT.flush();
        }
    }

    static String oneLine(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root
               && (root instanceof java.util.concurrent.ExecutionException
                   || root instanceof java.lang.reflect.InvocationTargetException)) {
            root = root.getCause();
        }
        String msg = root.getClass().getSimpleName()
            + (root.getMessage() != null ? ": " + root.getMessage() : "");
        return msg.replace('\n', ' ').replace('\r', ' ');
    }

    // ------------------------------------------------------------------------------------------
    // The recipes behind one common shape.

    /** InterProcessMutex with its protected getLockPath() made visible (no reflection needed). */
    static final class PeerMutex extends InterProcessMutex {
        PeerMutex(CuratorFramework client, String path) {
            super(client, path);
        }

        String lockPath() {
            return getLockPath();
        }
    }

    interface PeerLock {
        /** Acquires; ms < 0 waits forever. Returns our node(s), or null on timeout. */
        String acquire(long ms) throws Exception;

        void release() throws Exception;

        /** Full paths of every contender, sorted by sequence number. */
        List<String> participants() throws Exception;

        void makeRevocable(Runnable onRevoke) throws Exception;

        /** The single node whose czxid is logged by `loop` (the first node for multi). */
        String primaryNode(String acquiredNodes);
    }

    static String sequenceOf(String name) {
        return name.length() >= 10 ? name.substring(name.length() - 10) : name;
    }

    static List<String> sortBySequence(Collection<String> nodes) {
        List<String> out = new ArrayList<>(nodes);
        out.sort((a, b) -> sequenceOf(a).compareTo(sequenceOf(b)));
        return out;
    }

    /** Mutex, read lock or write lock: all are InterProcessMutex instances. */
    static final class MutexLock implements PeerLock {
        private final InterProcessMutex mutex;
        private final java.util.function.Supplier<String> node;
        private final CuratorFramework client; // non-null: list every child of path (read/write)
        private final String path;

        MutexLock(InterProcessMutex mutex, java.util.function.Supplier<String> node) {
            this(mutex, node, null, null);
        }

        MutexLock(InterProcessMutex mutex, java.util.function.Supplier<String> node,
                  CuratorFramework client, String path) {
            this.mutex = mutex;
            this.node = node;
            this.client = client;
            this.path = path;
        }

        public String acquire(long ms) throws Exception {
            boolean ok;
            if (ms < 0) {
                mutex.acquire();
                ok = true;
            } else {
                ok = mutex.acquire(ms, TimeUnit.MILLISECONDS);
            }
            return ok ? node.get() : null;
        }

        public void release() throws Exception {
            mutex.release();
        }

        public List<String> participants() throws Exception {
            if (client == null) {
                return sortBySequence(mutex.getParticipantNodes());
            }
            // The read and write locks' own getParticipantNodes() list only nodes of their kind;
            // the tests want every contender, readers and writers, in queue order.
            List<String> names;
            try {
                names = client.getChildren().forPath(path);
            } catch (KeeperException.NoNodeException e) {
                return new ArrayList<>();
            }
            List<String> full = new ArrayList<>();
            for (String n : sortBySequence(names)) {
                full.add(ZKPaths.makePath(path, n));
            }
            return full;
        }

        public void makeRevocable(Runnable onRevoke) {
            mutex.makeRevocable(forLock -> onRevoke.run());
        }

        public String primaryNode(String acquiredNodes) {
            return acquiredNodes;
        }
    }

    /** Reads the protected InterProcessMutex.getLockPath() of a mutex we could not subclass. */
    static java.util.function.Supplier<String> reflectLockPath(InterProcessMutex m) throws Exception {
        Method getter = InterProcessMutex.class.getDeclaredMethod("getLockPath");
        getter.setAccessible(true);
        return () -> {
            try {
                return (String) getter.invoke(m);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        };
    }

    static final class SemaphoreLock implements PeerLock {
        private final CuratorFramework client;
        private final InterProcessSemaphoreV2 semaphore;
        private final String path;
        private final Deque<Lease> leases = new ArrayDeque<>();

        SemaphoreLock(CuratorFramework client, String path, int maxLeases) {
            this.client = client;
            this.path = path;
            this.semaphore = new InterProcessSemaphoreV2(client, path, maxLeases);
        }

        public String acquire(long ms) throws Exception {
            Lease lease = ms < 0 ? semaphore.acquire() : semaphore.acquire(ms, TimeUnit.MILLISECONDS);
            if (lease == null) {
                return null;
            }
            leases.push(lease);
            return fullLeasePath(path, lease.getNodeName());
        }

        public void release() throws Exception {
            if (leases.isEmpty()) {
                throw new IllegalStateException("no lease held");
            }
            leases.pop().close();
        }

        public List<String> participants() throws Exception {
            return leaseChildren(client, path);
        }

        public void makeRevocable(Runnable onRevoke) {
            throw new UnsupportedOperationException("a semaphore is not revocable");
        }

        public String primaryNode(String acquiredNodes) {
            return acquiredNodes;
        }
    }

    /** Lease.getNodeName() answers the bare node name; the protocol always shows full paths. */
    static String fullLeasePath(String path, String name) {
        return name.startsWith("/") ? name : ZKPaths.makePath(ZKPaths.makePath(path, "leases"), name);
    }

    static List<String> leaseChildren(CuratorFramework client, String path) throws Exception {
        String leases = ZKPaths.makePath(path, "leases");
        List<String> names;
        try {
            names = client.getChildren().forPath(leases);
        } catch (KeeperException.NoNodeException e) {
            return new ArrayList<>();
        }
        List<String> full = new ArrayList<>();
        for (String n : sortBySequence(names)) {
            full.add(ZKPaths.makePath(leases, n));
        }
        return full;
    }

    static final class SemaphoreMutexLock implements PeerLock {
        private final CuratorFramework client;
        private final InterProcessSemaphoreMutex mutex;
        private final String path;
        private final Field leaseField;

        SemaphoreMutexLock(CuratorFramework client, String path) throws Exception {
            this.client = client;
            this.path = path;
            this.mutex = new InterProcessSemaphoreMutex(client, path);
            // The lease is private; its node name is what the tests need to see.
            this.leaseField = InterProcessSemaphoreMutex.class.getDeclaredField("lease");
            this.leaseField.setAccessible(true);
        }

        public String acquire(long ms) throws Exception {
            boolean ok;
            if (ms < 0) {
                mutex.acquire();
                ok = true;
            } else {
                ok = mutex.acquire(ms, TimeUnit.MILLISECONDS);
            }
            if (!ok) {
                return null;
            }
            Lease lease = (Lease) leaseField.get(mutex);
            return lease != null ? fullLeasePath(path, lease.getNodeName()) : "?";
        }

        public void release() throws Exception {
            mutex.release();
        }

        public List<String> participants() throws Exception {
            return leaseChildren(client, path);
        }

        public void makeRevocable(Runnable onRevoke) {
            throw new UnsupportedOperationException("InterProcessSemaphoreMutex is not revocable");
        }

        public String primaryNode(String acquiredNodes) {
            return acquiredNodes;
        }
    }

    static final class MultiLock implements PeerLock {
        private final List<PeerMutex> mutexes = new ArrayList<>();
        private final InterProcessMultiLock multi;

        MultiLock(CuratorFramework client, List<String> paths) {
            List<InterProcessLock> locks = new ArrayList<>();
            for (String p : paths) {
                PeerMutex m = new PeerMutex(client, p);
                mutexes.add(m);
                locks.add(m);
            }
            multi = new InterProcessMultiLock(locks);
        }

        public String acquire(long ms) throws Exception {
            boolean ok;
            if (ms < 0) {
                multi.acquire();
                ok = true;
            } else {
                ok = multi.acquire(ms, TimeUnit.MILLISECONDS);
            }
            if (!ok) {
                return null;
            }
            StringBuilder sb = new StringBuilder();
            for (PeerMutex m : mutexes) {
                if (sb.length() > 0) {
                    sb.append(',');
                }
                sb.append(m.lockPath());
            }
            return sb.toString();
        }

        public void release() throws Exception {
            multi.release();
        }

        public List<String> participants() throws Exception {
            List<String> all = new ArrayList<>();
            for (PeerMutex m : mutexes) {
                all.addAll(sortBySequence(m.getParticipantNodes()));
            }
            return all;
        }

        public void makeRevocable(Runnable onRevoke) {
            for (PeerMutex m : mutexes) {
                m.makeRevocable(forLock -> onRevoke.run());
            }
        }

        public String primaryNode(String acquiredNodes) {
            int comma = acquiredNodes.indexOf(',');
            return comma < 0 ? acquiredNodes : acquiredNodes.substring(0, comma);
        }
    }

    // ------------------------------------------------------------------------------------------

    private final CuratorFramework client;
    private final PeerLock lock;
    private final ExecutorService lockThread;
    private final Deque<String> heldNodes = new ArrayDeque<>(); // touched only on the lock thread

    private CuratorPeer(CuratorFramework client, PeerLock lock) {
        this.client = client;
        this.lock = lock;
        this.lockThread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "curator-peer-lock");
            t.setDaemon(true);
            return t;
        });
    }

    static long epochNanos() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    private String sessionHex() throws Exception {
        return "0x" + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId());
    }

    // ---- commands run on the lock thread

    private void doAcquire(long ms) throws Exception {
        String node = lock.acquire(ms);
        if (node == null) {
            emit("timeout");
            return;
        }
        heldNodes.push(node);
        lastNode = node;
        emit("acquired " + node);
    }

    private void doRelease() throws Exception {
        lock.release();
        popHeld();
        emit("released");
    }

    private void popHeld() {
        if (!heldNodes.isEmpty()) {
            heldNodes.pop();
        }
        lastNode = heldNodes.isEmpty() ? "" : heldNodes.peek();
    }

    private void doRevocable() throws Exception {
        lock.makeRevocable(() -> {
            // Called on a Curator thread; the release must happen on the owning (lock) thread.
            String node = lastNode;
            emit("revoke-requested " + node);
            lockThread.execute(() -> {
                try {
                    lock.release();
                    popHeld();
                    emit("revoke-released " + node);
                } catch (Throwable t) {
                    emit("revoke-released error " + oneLine(t));
                }
            });
        });
        emit("revocable");
    }

    /** The newest node we hold, for the asynchronous revocation lines (any thread reads it). */
    private volatile String lastNode = "";

    private void doLoop(int n, long holdMicros, String logfile) throws Exception {
        int done = 0;
        try (OutputStream log = new FileOutputStream(logfile, true)) {
            for (; done < n; ++done) {
                String node = lock.acquire(-1);
                long start = epochNanos();
                lastNode = node;
                long czxid = -1;
                try {
                    Stat st = client.checkExists().forPath(lock.primaryNode(node));
                    if (st != null) {
                        czxid = st.getCzxid();
                    }
                    log.write(("START " + start + " " + czxid + " java\n").getBytes(StandardCharsets.US_ASCII));
                    if (holdMicros > 0) {
                        long until = System.nanoTime() + holdMicros * 1000L;
                        long left;
                        while ((left = until - System.nanoTime()) > 0) {
                            LockSupport.parkNanos(left);
                        }
                    }
                    long end = epochNanos();
                    log.write(("END " + end + " java\n").getBytes(StandardCharsets.US_ASCII));
                } finally {
                    lock.release();
                    lastNode = heldNodes.isEmpty() ? "" : heldNodes.peek();
                }
            }
        } catch (Exception e) {
            emit("error loop failed after " + done + " iterations: " + oneLine(e));
            return;
        }
        emit("done " + n);
    }

    private void onLockThread(String cmd, ThrowingRunnable body) {
        try {
            lockThread.execute(() -> {
                try {
                    body.run();
                } catch (Throwable t) {
                    emit("error " + cmd + ": " + oneLine(t));
                }
            });
        } catch (Throwable t) {
            emit("error " + cmd + ": " + oneLine(t));
        }
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    // ---- the command loop

    private void serve() throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.isEmpty()) {
                continue;
            }
            String[] w = line.split("\\s+");
            String cmd = w[0];
            try {
                switch (cmd) {
                    case "acquire": {
                        long ms = w.length > 1 ? Long.parseLong(w[1]) : -1;
                        onLockThread(cmd, () -> doAcquire(ms));
                        break;
                    }
                    case "release":
                        onLockThread(cmd, this::doRelease);
                        break;
                    case "revocable":
                        onLockThread(cmd, this::doRevocable);
                        break;
                    case "loop": {
                        if (w.length != 4) {
                            emit("error usage: loop <n> <holdMicros> <logfile>");
                            break;
                        }
                        int n = Integer.parseInt(w[1]);
                        long hold = Long.parseLong(w[2]);
                        String file = w[3];
                        onLockThread(cmd, () -> doLoop(n, hold, file));
                        break;
                    }
                    case "participants":
                        emit(("participants " + String.join(",", lock.participants())).trim());
                        break;
                    case "revoke":
                        if (w.length != 2) {
                            emit("error usage: revoke <fullNodePath>");
                            break;
                        }
                        Revoker.attemptRevoke(client, w[1]);
                        emit("revoke-sent");
                        break;
                    case "expire":
                        client.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
                        emit("expired");
                        break;
                    case "session":
                        emit("session " + sessionHex());
                        break;
                    case "ping":
                        emit("pong");
                        break;
                    case "quit":
                        return;
                    default:
                        emit("error unknown command: " + cmd);
                }
            } catch (Throwable t) {
                emit("error " + cmd + ": " + oneLine(t));
            }
        }
    }

    private void shutdown() {
        lockThread.shutdown();
        try {
            if (!lockThread.awaitTermination(3, TimeUnit.SECONDS)) {
                lockThread.shutdownNow(); // interrupts a blocked acquire; Curator then deletes its node
                lockThread.awaitTermination(3, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            client.close();
        } catch (Throwable t) {
            // closing the session deletes our ephemeral nodes anyway
        }
    }

    // ------------------------------------------------------------------------------------------

    /**
     * The command line both peers share: --connect, --session-timeout-ms, --connection-timeout-ms and the
     * options `extra` names (each takes a value); the words that are not options go to `rest`. A bad command
     * line prints `error <why> (usage: <usage>)` and exits with status 2.
     */
    static final class CommandLine {
        String connect;
        int sessionTimeoutMs = 30000;
        int connectionTimeoutMs = 10000;
        final java.util.Map<String, String> options = new java.util.HashMap<>();
        final List<String> rest = new ArrayList<>();
        private final String usage;

        CommandLine(String[] args, String usage, String... extra) {
            this.usage = usage;
            List<String> known = java.util.Arrays.asList(extra);
            try {
                for (int i = 0; i < args.length; ++i) {
                    String a = args[i];
                    boolean hasValue = i + 1 < args.length;
                    if (a.equals("--connect") && hasValue) {
                        connect = args[++i];
                    } else if (a.equals("--session-timeout-ms") && hasValue) {
                        sessionTimeoutMs = Integer.parseInt(args[++i]);
                    } else if (a.equals("--connection-timeout-ms") && hasValue) {
                        connectionTimeoutMs = Integer.parseInt(args[++i]);
                    } else if (known.contains(a) && hasValue) {
                        options.put(a, args[++i]);
                    } else if (a.startsWith("--")) {
                        fail("unknown option " + a);
                    } else {
                        rest.add(a);
                    }
                }
            } catch (NumberFormatException e) {
                fail("bad number: " + e.getMessage());
            }
            if (connect == null) {
                fail("--connect is required");
            }
        }

        void fail(String why) {
            emit("error " + why + " (usage: " + usage + ")");
            System.exit(2);
        }

        /** A client for these settings (not started) that prints its connection states as `state` lines. */
        CuratorFramework newClient() {
            return newClient(new ExponentialBackoffRetry(100, 3));
        }

        CuratorFramework newClient(RetryPolicy retryPolicy) {
            CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(sessionTimeoutMs)
                .connectionTimeoutMs(Math.min(connectionTimeoutMs, sessionTimeoutMs))
                .retryPolicy(retryPolicy)
                .build();
            client.getConnectionStateListenable().addListener((c, state) -> emit("state " + state.name()));
            return client;
        }
    }

    public static void main(String[] args) {
        CommandLine cl = new CommandLine(args, "curator-peer --connect HOSTS [--session-timeout-ms N]"
                                         + " [--connection-timeout-ms N] mutex|semaphore-mutex|read|write|multi"
                                         + "|semaphore:<leases> PATH...");
        if (cl.rest.size() < 2) {
            cl.fail("a recipe and at least one path are required");
        }
        String recipe = cl.rest.get(0);
        List<String> paths = cl.rest.subList(1, cl.rest.size());
        if (!recipe.equals("multi") && paths.size() != 1) {
            cl.fail("recipe " + recipe + " takes exactly one path");
        }
        String connect = cl.connect;
        int connectionTimeoutMs = cl.connectionTimeoutMs;
        CuratorFramework client = cl.newClient();

        PeerLock lock;
        try {
            String path = paths.get(0);
            if (recipe.equals("mutex")) {
                PeerMutex m = new PeerMutex(client, path);
                lock = new MutexLock(m, m::lockPath);
            } else if (recipe.equals("read") || recipe.equals("write")) {
                InterProcessReadWriteLock rw = new InterProcessReadWriteLock(client, path);
                InterProcessMutex m = recipe.equals("read") ? rw.readLock() : rw.writeLock();
                lock = new MutexLock(m, reflectLockPath(m), client, path);
            } else if (recipe.equals("semaphore-mutex")) {
                lock = new SemaphoreMutexLock(client, path);
            } else if (recipe.equals("multi")) {
                lock = new MultiLock(client, paths);
            } else if (recipe.startsWith("semaphore:")) {
                int leases = Integer.parseInt(recipe.substring("semaphore:".length()));
                if (leases < 1) {
                    throw new IllegalArgumentException("semaphore needs at least 1 lease");
                }
                lock = new SemaphoreLock(client, path, leases);
            } else {
                cl.fail("unknown recipe " + recipe);
                return;
            }
        } catch (Throwable t) {
            emit("error " + oneLine(t));
            System.exit(2);
            return;
        }

        client.start();
        CuratorPeer peer = new CuratorPeer(client, lock);
        try {
            if (!client.blockUntilConnected(connectionTimeoutMs, TimeUnit.MILLISECONDS)) {
                emit("error could not connect to " + connect + " within " + connectionTimeoutMs + " ms");
                client.close();
                System.exit(2);
            }
            emit("ready " + peer.sessionHex());
            peer.serve();
        } catch (Throwable t) {
            emit("error " + oneLine(t));
        }
        peer.shutdown();
        emit("bye");
        System.exit(0);
    }
}
