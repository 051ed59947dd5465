package io.lockbridge;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * lockbridge-java's redis-server fixtures ({@link RedisServer},
 * {@link Topology}), package-private there, made reachable for the Spring
 * modules' tests: a standalone server, a Sentinel setup, a cluster, all on
 * loopback redis-server processes. A missing redis-server fails the test
 * with the command that installs it.
 */
public final class Fixtures {
    private Fixtures() {}

    /** One redis-server. */
    public static final class Standalone implements AutoCloseable {
        private final RedisServer server;

        public Standalone() throws Exception {
            server = new RedisServer();
        }

        public int port() {
            return server.port;
        }

        /** The value at key as UTF-8 text, or null. */
        public String get(String key) {
            return server.get(key);
        }

        /** The value at key, raw, or null. */
        public byte[] get(byte[] key) {
            return server.raw.get(key);
        }

        /** PTTL of key in ms (-2 absent, -1 no expiry). */
        public long pttl(String key) {
            return server.raw.pttl(key.getBytes(StandardCharsets.UTF_8));
        }

        public boolean exists(String key) {
            return server.raw.exists(key.getBytes(StandardCharsets.UTF_8)) == 1;
        }

        /** Initialises namespace at phase to (a forced init, as the controller's). */
        public void initPhase(String namespace, Phase to) {
            server.setPhase(namespace, "", to, "init");
        }

        /** Steps namespace from phase from to phase to, as the controller's step. */
        public void stepPhase(String namespace, Phase from, Phase to) {
            server.setPhase(namespace, from.wireName(), to, "step");
        }

        /** A new lockbridge Redis on this server. */
        public Redis redis() {
            return server.redis();
        }

        @Override
        public void close() {
            server.close();
        }
    }

    /** A master, its replica and one Sentinel watching them as {@link #MASTER}. */
    public static final class Sentinel implements AutoCloseable {
        public static final String MASTER = "mymaster";
        private final Topology.Sentinel topology;

        public Sentinel() throws Exception {
            topology = new Topology.Sentinel();
        }

        public int sentinelPort() {
            return topology.sentinel.port;
        }

        /** The value at key on the master. */
        public String getOnMaster(String key) {
            return topology.master.cmd.get(key);
        }

        /** The value at key on the replica. */
        public String getOnReplica(String key) {
            return topology.replica.cmd.get(key);
        }

        @Override
        public void close() {
            topology.close();
        }
    }

    /** Three masters, slots split as redis-cli --cluster create does. */
    public static final class Cluster implements AutoCloseable {
        private final Topology.Cluster cluster;

        public Cluster() throws Exception {
            cluster = new Topology.Cluster();
        }

        /** host:port of each master. */
        public List<String> nodes() {
            return cluster.nodes.stream().map(n -> "127.0.0.1:" + n.port).toList();
        }

        /** The value at key, read on the master that owns its slot. */
        public String get(String key) {
            int slot = Keys.slot(key.getBytes(StandardCharsets.UTF_8));
            return cluster.nodes.get(cluster.ownerOf(slot)).cmd.get(key);
        }

        @Override
        public void close() {
            cluster.close();
        }
    }
}
