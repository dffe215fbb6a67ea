/*
 * NodePeer: a scriptable Apache Curator 5.x PersistentNode owner for zkrecipes' interop tests
 * (test/integration/nodes_interop_test.cpp), so that a Java PersistentNode and a zkrecipes one live under one
 * parent and each side reads the other's. It is compiled together with CuratorPeer.java and uses its output
 * helpers.
 *
 * Usage:
 *   NodePeer --connect HOSTS [--session-timeout-ms N] [--connection-timeout-ms N] [--data DATA] node PATH
 *
 *   node   a started PersistentNode(client, CreateMode.EPHEMERAL, false, PATH, DATA) (DATA defaults to
 *          "java"), waited for (waitForInitialCreate, 30 s) before `ready`
 *
 * Start-up: `ready <session id as 0x hex>`, or `error <message>` and exit status 2.
 *
 * Commands, one per line, each answered by exactly one line:
 *   path         -> `path <actual path>` (`path` alone before the node is made)
 *   read <path>  -> `data <owner session as 0x hex> <data>` (the node's bytes as text) or `none`
 *   set <data>   -> `ok` (PersistentNode.setData)
 *   expire       -> `expired` (ZooKeeper's Testable.injectSessionExpiration: the client believes its session
 *                   expired and starts a new one; the server keeps the old session until it times out)
 *   session      -> `session <0x hex>`
 *   close        -> `closed` (PersistentNode.close: the node is deleted)
 *   quit         -> `bye`, exit status 0 (end of stdin does the same)
 *   failing      -> `error <message>`
 */

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

public final class NodePeer {
    public static void main(String[] args) throws Exception {
        CuratorPeer.CommandLine cl = new CuratorPeer.CommandLine(
            args, "NodePeer --connect HOSTS [--data DATA] node PATH", "--data");
        if (cl.rest.size() != 2 || !cl.rest.get(0).equals("node")) {
            cl.fail("the recipe node and one path are required");
        }
        String path = cl.rest.get(1);
        String data = cl.options.getOrDefault("--data", "java");
        CuratorFramework client = cl.newClient();
        client.start();
        if (!client.blockUntilConnected(cl.connectionTimeoutMs, TimeUnit.MILLISECONDS)) {
            CuratorPeer.emit("error could not connect to " + cl.connect);
            System.exit(2);
        }
        PersistentNode node = null;
        try {
            node = new PersistentNode(client, CreateMode.EPHEMERAL, false, path,
                                      data.getBytes(StandardCharsets.UTF_8));
            node.start();
            if (!node.waitForInitialCreate(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the node was not created within 30 s");
            }
        } catch (Throwable t) {
            CuratorPeer.emit("error " + CuratorPeer.oneLine(t));
            System.exit(2);
        }
        CuratorPeer.emit("ready " + sessionHex(client));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split("\\s+", 2);
            String cmd = w[0];
            try {
                if (cmd.equals("quit")) {
                    break;
                } else if (cmd.equals("path")) {
                    String actual = node.getActualPath();
                    CuratorPeer.emit(actual == null ? "path" : "path " + actual);
                } else if (cmd.equals("read")) {
                    Stat st = new Stat();
                    try {
                        byte[] b = client.getData().storingStatIn(st).forPath(w[1]);
                        CuratorPeer.emit("data 0x" + Long.toHexString(st.getEphemeralOwner()) + " "
                                         + new String(b, StandardCharsets.UTF_8));
                    } catch (KeeperException.NoNodeException e) {
                        CuratorPeer.emit("none");
                    }
                } else if (cmd.equals("set")) {
                    node.setData(w[1].getBytes(StandardCharsets.UTF_8));
                    CuratorPeer.emit("ok");
                } else if (cmd.equals("expire")) {
                    client.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
                    CuratorPeer.emit("expired");
                } else if (cmd.equals("session")) {
                    CuratorPeer.emit("session " + sessionHex(client));
                } else if (cmd.equals("close")) {
                    node.close();
                    CuratorPeer.emit("closed");
                } else {
                    CuratorPeer.emit("error unknown command: " + cmd);
                }
            } catch (Throwable t) {
                CuratorPeer.emit("error " + cmd + ": " + CuratorPeer.oneLine(t));
            }
        }
        node.close();
        client.close();
        CuratorPeer.emit("bye");
        System.exit(0);
    }

    static String sessionHex(CuratorFramework client) throws Exception {
        return "0x" + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId());
    }
}
