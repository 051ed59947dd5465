package io.lockbridge;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;

/**
 * Redis topologies for the tests, on redis-server processes on loopback
 * ports (as Go's internal/testing/redistest): a 3-master cluster, and a
 * master with a replica watched by one Sentinel. Plus a proxy that can cut a
 * connection right after a command went through, its reply thrown away.
 */
final class Topology {
    private Topology() {}

    static int freePort() throws IOException {
        try (ServerSocket probe = new ServerSocket(0)) {
            return probe.getLocalPort();
        }
    }

    static String bin() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            File file = new File(dir, "redis-server");
            if (file.canExecute()) {
                return file.getPath();
            }
        }
        throw new AssertionError(RedisServer.INSTALL);
    }

    static void eventually(String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(50);
        }
    }

    /** One redis-server (or sentinel) process with a plain String client on it. */
    static final class Node implements AutoCloseable {
        final int port;
        final Path dir;
        private final Process proc;
        private final RedisClient client = RedisClient.create();
        private StatefulRedisConnection<String, String> conn;
        RedisCommands<String, String> cmd;

        Node(boolean sentinel, String sentinelConf, String... extra) throws Exception {
            port = freePort();
            dir = Files.createTempDirectory("lockbridge-redis");
            List<String> args = new ArrayList<>();
            args.add(bin());
            if (sentinel) {
                Path conf = dir.resolve("sentinel.conf");
                Files.writeString(conf, sentinelConf);
                args.add(conf.toString());
                args.add("--sentinel");
            }
            args.addAll(List.of("--port", Integer.toString(port), "--bind", "127.0.0.1", "--dir", dir.toString()));
            if (!sentinel) {
                args.addAll(List.of("--save", "", "--appendonly", "no"));
            }
            args.addAll(List.of(extra));
            proc = new ProcessBuilder(args).redirectErrorStream(true).redirectOutput(dir.resolve("log").toFile())
                    .start();
            long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (conn == null) {
                try {
                    conn = client.connect(StringCodec.UTF8, uri());
                } catch (RuntimeException e) {
                    if (System.nanoTime() > end || !proc.isAlive()) {
                        proc.destroyForcibly();
                        throw new IllegalStateException("redis-server on port " + port + " did not start: "
                                + Files.readString(dir.resolve("log")), e);
                    }
                    Thread.sleep(20);
                }
            }
            cmd = conn.sync();
        }

        RedisURI uri() {
            return RedisURI.create("127.0.0.1", port);
        }

        /** A new plain connection (after CLIENT KILL took the old one). */
        RedisCommands<String, String> fresh() {
            conn.closeAsync();
            conn = client.connect(StringCodec.UTF8, uri());
            cmd = conn.sync();
            return cmd;
        }

        /** Calls of EVAL and EVALSHA this server ran, by INFO commandstats. */
        long evals() {
            long total = 0;
            for (String line : cmd.info("commandstats").split("\r?\n")) {
                if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                    total += Long.parseLong(line.replaceAll("^[^:]*:calls=(\\d+),.*$", "$1"));
                }
            }
            return total;
        }

        /**
         * EVAL and EVALSHA calls this server refused before running them (a
         * MOVED or ASK reply, say), by INFO commandstats' rejected_calls:
         * Redis counts those apart from the calls it ran.
         */
        long rejectedEvals() {
            long total = 0;
            for (String line : cmd.info("commandstats").split("\r?\n")) {
                if ((line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:"))
                        && line.contains("rejected_calls=")) {
                    total += Long.parseLong(line.replaceAll("^.*rejected_calls=(\\d+).*$", "$1"));
                }
            }
            return total;
        }

        /** Loads every lockbridge script, so that EVALSHA runs at once. */
        void loadScripts() {
            for (Script script : Scripts.all().values()) {
                conn.sync().scriptLoad(new String(script.source(), java.nio.charset.StandardCharsets.UTF_8));
            }
        }

        @Override
        public void close() {
            try {
                conn.close();
            } catch (RuntimeException ignored) {
                // killed
            }
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            proc.destroy();
            try {
                proc.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Three masters, slots split as redis-cli --cluster create does. */
    static final class Cluster implements AutoCloseable {
        final List<Node> nodes = new ArrayList<>();
        final List<String> ids = new ArrayList<>();
        final List<Node> replicas = new ArrayList<>();

        Cluster() throws Exception {
            int[][] ranges = {{0, 5460}, {5461, 10922}, {10923, 16383}};
            try {
                for (int i = 0; i < 3; i++) {
                    Node node = new Node(false, null, "--cluster-enabled", "yes", "--cluster-config-file",
                            "nodes.conf", "--cluster-node-timeout", "5000");
                    nodes.add(node);
                    node.cmd.clusterAddSlotsRange(io.lettuce.core.Range.create(ranges[i][0], ranges[i][1]));
                    node.cmd.clusterSetConfigEpoch(i + 1);
                    ids.add(node.cmd.clusterMyId());
                }
                for (int i = 0; i < 3; i++) {
                    for (int j = i + 1; j < 3; j++) {
                        nodes.get(i).cmd.clusterMeet("127.0.0.1", nodes.get(j).port);
                    }
                }
                eventually("cluster ok", () -> nodes.stream().allMatch(node -> {
                    String info = node.cmd.clusterInfo();
                    return info.contains("cluster_state:ok") && info.contains("cluster_known_nodes:3")
                            && info.contains("cluster_slots_ok:16384");
                }));
                eventually("every node sees the whole map", () -> nodes.stream()
                        .allMatch(n -> n.cmd.clusterSlots().size() == 3));
            } catch (Exception | Error e) {
                close();
                throw e;
            }
        }

        List<RedisURI> seeds() {
            return List.of(nodes.get(0).uri());
        }

        int ownerOf(int slot) {
            return slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2;
        }

        /** Moves an empty slot from node from to node to (IMPORTING, MIGRATING, then NODE on every node). */
        void moveSlot(int slot, int from, int to) throws InterruptedException {
            nodes.get(to).cmd.clusterSetSlotImporting(slot, ids.get(from));
            nodes.get(from).cmd.clusterSetSlotMigrating(slot, ids.get(to));
            nodes.get(to).cmd.clusterSetSlotNode(slot, ids.get(to));
            nodes.get(from).cmd.clusterSetSlotNode(slot, ids.get(to));
            for (int i = 0; i < 3; i++) {
                if (i != from && i != to) {
                    nodes.get(i).cmd.clusterSetSlotNode(slot, ids.get(to));
                }
            }
            eventually("slot " + slot + " moved", () -> nodes.stream().allMatch(n -> n.cmd.clusterKeyslot("x") >= 0
                    && n.cmd.clusterSlots().toString().contains(Integer.toString(nodes.get(to).port))));
        }

        /**
         * Starts one more cluster node, makes it a replica of node masterIndex, and
         * returns once its link is up and every node lists it (it is closed
         * with the cluster).
         */
        Node addReplica(int masterIndex) throws Exception {
            Node replica = new Node(false, null, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", "5000");
            replicas.add(replica);
            replica.cmd.clusterMeet("127.0.0.1", nodes.get(masterIndex).port);
            eventually("the new node joined", () -> {
                try {
                    return "OK".equals(replica.cmd.clusterReplicate(ids.get(masterIndex)));
                } catch (RuntimeException e) {
                    return false;
                }
            });
            eventually("the replica is in sync and known to every node",
                    () -> replica.cmd.info("replication").contains("master_link_status:up")
                    && nodes.stream().allMatch(n -> n.cmd.clusterNodes().contains(replica.cmd.clusterMyId())));
            return replica;
        }

        /**
         * CLUSTER FAILOVER on replica (coordinated: its master pauses its
         * clients until replica has caught up); returns once every node,
         * replica too, names replica as the master of slot.
         */
        void failover(Node replica, int slot) throws InterruptedException {
            List<Node> all = new ArrayList<>(nodes);
            all.addAll(replicas);
            String id = replica.cmd.clusterMyId();
            // A master heeds a manual failover only from a node it knows as
            // its replica, with its link up; and the replica is promoted
            // only with the votes of most masters, each of which votes only
            // for a node it knows as a replica. A node demoted by the
            // previous failover is a master to the others until its own
            // gossip reaches them (a ping to each at least every half node
            // timeout, later on a loaded machine): they refuse ("Failover
            // auth denied to <id>: it is a master node" in their logs), the
            // manual failover lapses after 5 s, and the attempt below
            // waited 20 s for nothing — longer than a waiter's 20 s wait.
            // So: every node knows replica as the replica of its master.
            eventually("port " + replica.port + " replicates its master, and every node knows it as its replica",
                    () -> {
                        String[] self = nodeLine(replica, id);
                        return replica.cmd.info("replication").contains("master_link_status:up") && self != null
                                && all.stream().map(n -> nodeLine(n, id)).allMatch(line -> line != null
                                        && line[2].contains("slave") && line[3].equals(self[3]));
                    });
            for (int attempt = 0;; attempt++) {
                replica.cmd.clusterFailover(false);
                try {
                    eventually("the replica serves slot " + slot + " on every node",
                            () -> all.stream().allMatch(n -> masterOf(n, slot) == replica.port));
                    return;
                } catch (AssertionError e) {
                    if (attempt == 2) {
                        throw e;
                    }
                }
            }
        }

        /** The fields of id's line in node's CLUSTER NODES (id, address, flags, master id, …); null if absent. */
        static String[] nodeLine(Node node, String id) {
            return node.cmd.clusterNodes().lines().filter(l -> l.startsWith(id + " ")).findFirst()
                    .map(l -> l.split(" ")).orElse(null);
        }

        /** The port of the master of slot in node's CLUSTER SLOTS. */
        static int masterOf(Node node, int slot) {
            for (Object entry : node.cmd.clusterSlots()) {
                List<?> range = (List<?>) entry;
                if ((Long) range.get(0) <= slot && slot <= (Long) range.get(1)) {
                    return ((Long) ((List<?>) range.get(2)).get(1)).intValue();
                }
            }
            return -1;
        }

        @Override
        public void close() {
            nodes.forEach(Node::close);
            replicas.forEach(Node::close);
        }
    }

    /**
     * A master and its replica, with no Sentinel: the test cuts the replica
     * off and promotes it itself (Go's redistest.Replicated).
     */
    static final class Replicated implements AutoCloseable {
        final Node master;
        final Node replica;

        Replicated() throws Exception {
            // The master syncs at once rather than after 5 s of waiting for more replicas.
            master = new Node(false, null, "--repl-diskless-sync-delay", "0");
            try {
                replica = new Node(false, null, "--replicaof", "127.0.0.1", Integer.toString(master.port));
                // Acknowledging: after the sync, the master streams to the
                // replica only from its first ACK (up to 1 s later); until
                // then WAIT counts it not. A write and WAIT on the master show it.
                eventually("replica acknowledging", () -> {
                    master.cmd.set("lockbridge-test:sync", "1");
                    master.cmd.del("lockbridge-test:sync");
                    return master.cmd.waitForReplication(1, 100) == 1;
                });
            } catch (Exception | Error e) {
                master.close();
                throw e;
            }
        }

        /**
         * Cuts the replica off from the master, as a partition between them
         * would: REPLICAOF a loopback port nobody listens on. It keeps what
         * it has and gets none of the master's later writes (SIGSTOP would
         * not do: the writes would wait in its socket and apply on CONT).
         */
        void detach() throws IOException {
            replica.cmd.replicaof("127.0.0.1", freePort());
        }

        /**
         * A failover after the master's loss: the master is killed (SIGKILL,
         * it stays down), the replica promoted (REPLICAOF NO ONE) with what
         * it had received.
         */
        void failover() throws Exception {
            master.proc.destroyForcibly().waitFor();
            replica.cmd.replicaofNoOne();
            eventually("the replica is master", () -> replica.cmd.info("replication").contains("role:master"));
        }

        @Override
        public void close() {
            replica.close();
            master.close();
        }
    }

    /** A master, its replica, and one Sentinel (quorum 1) watching them as "mymaster". */
    static final class Sentinel implements AutoCloseable {
        Node master;
        Node replica;
        Node sentinel;
        private RedisClient sentinelClient;
        io.lettuce.core.sentinel.api.sync.RedisSentinelCommands<String, String> scmd;

        Sentinel() throws Exception {
            try {
                master = new Node(false, null);
                replica = new Node(false, null, "--replicaof", "127.0.0.1", Integer.toString(master.port));
                eventually("replica in sync", () -> replica.cmd.info("replication").contains("master_link_status:up"));
                sentinel = new Node(true, "sentinel monitor mymaster 127.0.0.1 " + master.port + " 1\n"
                        + "sentinel down-after-milliseconds mymaster 2000\nsentinel failover-timeout mymaster 10000\n");
                sentinelClient = RedisClient.create();
                scmd = sentinelClient.connectSentinel(StringCodec.UTF8, sentinel.uri()).sync();
                eventually("the sentinel knows the replica", () -> {
                    List<Map<String, String>> replicas = scmd.replicas("mymaster");
                    return replicas.size() == 1 && "slave".equals(replicas.get(0).get("flags"));
                });
            } catch (Exception | Error e) {
                close();
                throw e;
            }
        }

        RedisURI uri() {
            return RedisURI.Builder.sentinel("127.0.0.1", sentinel.port, "mymaster").build();
        }

        /** SENTINEL FAILOVER, until the sentinel names the replica as master. */
        void failover() throws InterruptedException {
            scmd.failover("mymaster");
            eventually("the replica is master", () -> {
                var addr = scmd.getMasterAddrByName("mymaster");
                return addr != null && ((java.net.InetSocketAddress) addr).getPort() == replica.port;
            });
        }

        @Override
        public void close() {
            if (sentinelClient != null) {
                sentinelClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
            for (Node node : new Node[] {sentinel, replica, master}) {
                if (node != null) {
                    node.close();
                }
            }
        }
    }

    /**
     * A TCP proxy in front of a port that, once {@link #cutNext()} is armed,
     * lets the next command through to the server, throws its reply away and
     * closes the connection: a node connection dropped with a command in
     * flight that ran. Then it is a plain proxy again (a reconnect works).
     */
    static final class CutProxy implements AutoCloseable {
        final ServerSocket listener;
        private final int upstream;
        private final List<Socket> sockets = new CopyOnWriteArrayList<>();
        private volatile boolean armed;
        private volatile boolean closed;

        CutProxy(int upstreamPort) throws IOException {
            upstream = upstreamPort;
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread thread = new Thread(this::accept, "cut-proxy");
            thread.setDaemon(true);
            thread.start();
        }

        int port() {
            return listener.getLocalPort();
        }

        void cutNext() {
            armed = true;
        }

        /** 1 while a cut is armed and no command came through yet, else 0. */
        int armedLeft() {
            return armed ? 1 : 0;
        }

        private void accept() {
            while (!closed) {
                try {
                    Socket client = listener.accept();
                    Socket server = new Socket(InetAddress.getLoopbackAddress(), upstream);
                    sockets.add(client);
                    sockets.add(server);
                    java.util.concurrent.atomic.AtomicBoolean cut = new java.util.concurrent.atomic.AtomicBoolean();
                    pump(client, server, false, cut);
                    pump(server, client, true, cut);
                } catch (IOException e) {
                    if (closed) {
                        return;
                    }
                }
            }
        }

        private void pump(Socket from, Socket to, boolean replies, java.util.concurrent.atomic.AtomicBoolean cut) {
            Thread thread = new Thread(() -> {
                byte[] buf = new byte[16 * 1024];
                try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                    int count;
                    while ((count = in.read(buf)) >= 0) {
                        if (replies && cut.get()) {
                            continue;
                        }
                        if (!replies && armed) {
                            armed = false;
                            if (System.getenv("CUT_DEBUG") != null) System.err.println("CUT: "
                                    + new String(buf, 0, Math.min(count, 80)).replace("\r\n", " "));
                            cut.set(true);
                            Thread closer = new Thread(() -> {
                                try {
                                    // the rest of the command goes through, the
                                    // server runs it; its reply is thrown away
                                    Thread.sleep(300);
                                } catch (InterruptedException ignored) {
                                    // closing now
                                }
                                quiet(from);
                                quiet(to);
                            });
                            closer.setDaemon(true);
                            closer.start();
                        }
                        out.write(buf, 0, count);
                        out.flush();
                    }
                } catch (IOException ignored) {
                    // a side closed
                } finally {
                    quiet(from);
                    quiet(to);
                }
            });
            thread.setDaemon(true);
            thread.start();
        }

        private static void quiet(Socket socket) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing
            }
        }

        @Override
        public void close() {
            closed = true;
            quiet(listener);
            sockets.forEach(CutProxy::quiet);
        }

        private static void quiet(ServerSocket socket) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }
}
