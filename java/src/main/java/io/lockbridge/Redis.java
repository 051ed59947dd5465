package io.lockbridge;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArraySet;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;

/**
 * lockbridge-java's own connections to Redis — one server, a master behind
 * Sentinel, or a Redis Cluster — built so that a lock write is sent at most
 * once.
 *
 * <p>Lettuce, by default, re-queues the commands it had written but not
 * seen answered when a connection drops, and writes them again after it
 * reconnects (DefaultEndpoint.notifyDrainQueuedCommands moves them to its
 * disconnected buffer unless commands are rejected while disconnected). A
 * replayed owner-window release can delete a successor's lock. So every
 * command connection here is a plain {@link RedisClient} connection made
 * with {@code autoReconnect(false)} and
 * {@code DisconnectedBehavior.REJECT_COMMANDS}: a command in flight when it
 * drops fails, nothing is replayed, and lockbridge reports an
 * {@link UnknownOutcomeException}.
 *
 * <p><b>Connections.</b> Each call borrows a connection of its own from a
 * small pool (per node), and gives it back when the reply came. A call that
 * fails without a reply — a timeout, a dropped connection, an interrupt of
 * the calling thread — closes only the connection it borrowed (a late reply
 * must not be read as another command's); other threads' calls, on other
 * connections, go on. The first connection is opened in the factory
 * ({@link #of}, {@link #cluster}), before any lease clock starts.
 *
 * <p><b>Sentinel</b> ({@link #of} with a RedisURI naming sentinels and a
 * master id): each new connection asks the sentinels for the master. After
 * a failover the old master's connections are closed (Sentinel kills its
 * clients; a READONLY reply also empties the pool), calls in flight on them
 * fail with an unknown outcome, and the next call connects to the new master.
 *
 * <p><b>Cluster</b> ({@link #cluster}): lock commands do not go through
 * Lettuce's cluster connection (whose channel writer re-dispatches
 * redirected commands on its own node connections). lockbridge reads the
 * slot map (CLUSTER SLOTS), sends each script to the master of its first
 * key's slot over a node connection of its own, and follows MOVED and ASK
 * itself: those are error replies, the command did not run, so sending it to
 * the node named is its first run, not a resend. A command that got no reply
 * is never sent again, to any node; the slot map is read again before the
 * next command and a new node connection is opened. Release notices use
 * sharded pub/sub (SPUBLISH / SSUBSCRIBE), as Go's lockers do in a cluster.
 *
 * <p>Pub/sub (release and phase notices) uses a separate connection that may
 * reconnect: SUBSCRIBE changes no lock.
 *
 * <p>Share one Redis between lockers; close it when done.
 */
public final class Redis implements AutoCloseable {
    /** The default command timeout. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);
    /** Idle connections kept per node; more are opened while more calls run at once. */
    static final int MAX_IDLE = 8;
    /** MOVED/ASK replies followed for one command. */
    static final int MAX_REDIRECTS = 5;

    enum Kind {
        STANDALONE, SENTINEL, CLUSTER
    }

    private final Kind kind;
    private final RedisURI uri; // standalone or sentinel: the target; cluster: the first seed
    private final List<RedisURI> seeds; // cluster
    private final Duration timeout;
    private final ClientResources ownResources;
    private final RedisClient client;
    private final RedisClient pubsubClient; // standalone, sentinel
    private final RedisClusterClient pubsubCluster; // cluster

    private final Map<String, Pool> pools = new ConcurrentHashMap<>();
    private final Object slotMu = new Object();
    private volatile String[] slotOwner; // cluster: "host:port" of each slot's master, null until read
    private final Map<String, RedisURI> nodes = new ConcurrentHashMap<>();

    private final Object connMu = new Object();
    private StatefulRedisPubSubConnection<byte[], byte[]> pubsub;
    private final Map<ByteBuffer, Set<Runnable>> listeners = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private Redis(Kind kind, RedisURI uri, List<RedisURI> seeds, ClientResources resources, Duration timeout, boolean replay) {
        this.kind = kind;
        this.uri = uri;
        this.seeds = seeds;
        this.timeout = timeout;
        this.ownResources = resources == null ? DefaultClientResources.create() : null;
        ClientResources res = resources == null ? ownResources : resources;
        this.client = RedisClient.create(res);
        // replay: only for the tests that show what a resend does.
        this.client.setOptions(replay ? ClientOptions.builder().autoReconnect(true).build()
                : ClientOptions.builder().autoReconnect(false).disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS).build());
        if (kind == Kind.CLUSTER) {
            this.pubsubClient = null;
            this.pubsubCluster = RedisClusterClient.create(res, seeds);
            for (RedisURI s : seeds) {
                nodes.put(addr(s.getHost(), s.getPort()), s);
            }
        } else {
            this.pubsubClient = RedisClient.create(res);
            this.pubsubCluster = null;
        }
    }

    /**
     * Connections to the server at uri, with the default timeout; when uri
     * names sentinels (RedisURI.Builder.sentinel(…), or
     * "redis-sentinel://host:port/#master"), to the master they name.
     */
    public static Redis of(RedisURI uri) {
        return of(uri, DEFAULT_TIMEOUT);
    }

    /** {@link #of(RedisURI)}; each command waits at most timeout for its reply. */
    public static Redis of(RedisURI uri, Duration timeout) {
        return of(uri, null, timeout);
    }

    static Redis of(RedisURI uri, ClientResources resources, Duration timeout) {
        return of(uri, resources, timeout, false);
    }

    /** replay: Lettuce's auto-reconnect and replay back on, for the tests that show what it does. */
    static Redis of(RedisURI uri, ClientResources resources, Duration timeout, boolean replay) {
        checkTimeout(uri != null, timeout, "a RedisURI");
        boolean sentinel = uri.getSentinels() != null && !uri.getSentinels().isEmpty();
        if (sentinel && (uri.getSentinelMasterId() == null || uri.getSentinelMasterId().isEmpty())) {
            throw new InvalidException("lockbridge: a Sentinel RedisURI needs the master's name (sentinelMasterId)");
        }
        return new Redis(sentinel ? Kind.SENTINEL : Kind.STANDALONE, uri, null, resources, timeout, replay).warm();
    }

    /** Connections to the Redis Cluster that seeds belong to (any of its nodes), with the default timeout. */
    public static Redis cluster(List<RedisURI> seeds) {
        return cluster(seeds, DEFAULT_TIMEOUT);
    }

    /** {@link #cluster(List)}; each command waits at most timeout for its reply. */
    public static Redis cluster(List<RedisURI> seeds, Duration timeout) {
        return cluster(seeds, null, timeout, false);
    }

    static Redis cluster(List<RedisURI> seeds, ClientResources resources, Duration timeout, boolean replay) {
        checkTimeout(seeds != null && !seeds.isEmpty() && seeds.stream().allMatch(java.util.Objects::nonNull), timeout, "the cluster's seed RedisURIs");
        for (RedisURI s : seeds) {
            if (s.getSentinels() != null && !s.getSentinels().isEmpty()) {
                throw new InvalidException("lockbridge: a cluster seed cannot be a Sentinel URI");
            }
        }
        return new Redis(Kind.CLUSTER, seeds.get(0), List.copyOf(seeds), resources, timeout, replay).warm();
    }

    private static void checkTimeout(boolean target, Duration timeout, String what) {
        if (!target || timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new InvalidException("lockbridge: Redis needs " + what + " and a positive timeout");
        }
    }

    /**
     * Opens the first connection (and, in a cluster, reads the slot map and
     * connects to every master) now, so that the first lock does not pay for
     * it inside its lease. A server not reachable yet is not an error here:
     * the first call connects.
     */
    private Redis warm() {
        try {
            if (kind == Kind.CLUSTER) {
                for (String a : owners()) {
                    Pool p = pool(a);
                    p.giveBack(p.borrow());
                }
            } else {
                Pool p = pool(null);
                p.giveBack(p.borrow());
            }
        } catch (RedisUnavailableException | InvalidException e) {
            // connect on the first call
        }
        return this;
    }

    Kind kind() {
        return kind;
    }

    static byte[] arg(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] arg(long n) {
        return arg(Long.toString(n));
    }

    /** The release scripts' notice command: "SPUBLISH" in a cluster (as Go's lockers), else "PUBLISH". */
    String publishCommand() {
        return kind == Kind.CLUSTER ? "SPUBLISH" : "PUBLISH";
    }

    private static String addr(String host, int port) {
        return host + ":" + port;
    }

    /** The pool of node a ("host:port"), or, with a null a, of the standalone server or Sentinel master. */
    private Pool pool(String a) {
        String k = a == null ? "" : a;
        return pools.computeIfAbsent(k, x -> new Pool(a == null ? uri : nodeUri(a)));
    }

    private RedisURI nodeUri(String a) {
        RedisURI known = nodes.get(a);
        if (known != null) {
            return known;
        }
        int i = a.lastIndexOf(':');
        RedisURI u = RedisURI.builder(uri).withHost(a.substring(0, i)).withPort(Integer.parseInt(a.substring(i + 1))).build();
        nodes.putIfAbsent(a, u);
        return nodes.get(a);
    }

    /**
     * A node's connections: each call borrows one for itself and gives it
     * back after a reply; a connection whose command got no reply is closed,
     * alone.
     */
    private final class Pool {
        final RedisURI target;
        final ConcurrentLinkedDeque<StatefulRedisConnection<byte[], byte[]>> idle = new ConcurrentLinkedDeque<>();

        Pool(RedisURI target) {
            this.target = target;
        }

        StatefulRedisConnection<byte[], byte[]> borrow() {
            for (StatefulRedisConnection<byte[], byte[]> c; (c = idle.pollFirst()) != null;) {
                if (c.isOpen()) {
                    return c;
                }
                quietClose(c);
            }
            if (closed) {
                throw new RedisUnavailableException("lockbridge: Redis connections closed", null);
            }
            try {
                StatefulRedisConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE, target);
                c.setTimeout(timeout);
                return c;
            } catch (RuntimeException e) {
                throw new RedisUnavailableException("lockbridge: cannot connect to " + where() + ": " + e.getMessage(), e);
            }
        }

        void giveBack(StatefulRedisConnection<byte[], byte[]> c) {
            if (!closed && c.isOpen() && idle.size() < MAX_IDLE) {
                idle.offerFirst(c);
                if (closed) {
                    clear();
                }
            } else {
                quietClose(c);
            }
        }

        /** Closes c, whose command got no reply: a late reply must not be taken for the next command's. */
        void drop(StatefulRedisConnection<byte[], byte[]> c) {
            quietClose(c);
        }

        void clear() {
            for (StatefulRedisConnection<byte[], byte[]> c; (c = idle.pollFirst()) != null;) {
                quietClose(c);
            }
        }

        String where() {
            if (target.getSentinels() != null && !target.getSentinels().isEmpty()) {
                return "the master " + target.getSentinelMasterId() + " of sentinels " + target.getSentinels();
            }
            return target.getHost() + ":" + target.getPort();
        }
    }

    private static void quietClose(StatefulRedisConnection<byte[], byte[]> c) {
        if (c.isOpen()) {
            c.closeAsync();
        }
    }

    /** The cluster's slot map, read with CLUSTER SLOTS when not known. */
    private String[] slots() {
        String[] m = slotOwner;
        if (m != null) {
            return m;
        }
        synchronized (slotMu) {
            if (slotOwner != null) {
                return slotOwner;
            }
            List<String> from = new ArrayList<>();
            seeds.forEach(s -> from.add(addr(s.getHost(), s.getPort())));
            nodes.keySet().forEach(a -> {
                if (!from.contains(a)) {
                    from.add(a);
                }
            });
            RuntimeException last = null;
            for (String a : from) {
                Pool p = pool(a);
                StatefulRedisConnection<byte[], byte[]> c;
                try {
                    c = p.borrow();
                } catch (RedisUnavailableException e) {
                    last = e;
                    continue;
                }
                try {
                    List<Object> r = c.sync().clusterSlots();
                    p.giveBack(c);
                    String[] owner = new String[Keys.SLOTS];
                    // CLUSTER SLOTS: [from, to, [host, port, id, …] of the master, replicas…] per range.
                    for (Object e : r) {
                        List<?> range = (List<?>) e;
                        List<?> master = (List<?>) range.get(2);
                        Object h = master.get(0);
                        String host = h instanceof byte[] bs ? new String(bs, StandardCharsets.UTF_8) : String.valueOf(h);
                        String o = addr(host.isEmpty() ? a.substring(0, a.lastIndexOf(':')) : host, ((Long) master.get(1)).intValue());
                        nodeUri(o);
                        for (int s = ((Long) range.get(0)).intValue(); s <= ((Long) range.get(1)).intValue(); s++) {
                            owner[s] = o;
                        }
                    }
                    slotOwner = owner;
                    return owner;
                } catch (RuntimeException e) {
                    p.drop(c);
                    last = e;
                }
            }
            throw new RedisUnavailableException("lockbridge: cannot read the cluster's slot map from " + from + ": "
                    + (last == null ? "no node" : last.getMessage()), last);
        }
    }

    private List<String> owners() {
        Set<String> s = new java.util.LinkedHashSet<>();
        for (String o : slots()) {
            if (o != null) {
                s.add(o);
            }
        }
        return new ArrayList<>(s);
    }

    private Pool poolFor(int slot) {
        if (kind != Kind.CLUSTER) {
            return pool(null);
        }
        String o = slot < 0 ? addr(uri.getHost(), uri.getPort()) : slots()[slot];
        if (o == null) {
            slotOwner = null;
            throw new RedisUnavailableException("lockbridge: no cluster node serves slot " + slot, null);
        }
        return pool(o);
    }

    /** One command on a connection: asking says an ASKING came before it, to send again before a second command. */
    private interface Op {
        Object run(RedisCommands<byte[], byte[]> c, boolean asking);
    }

    /**
     * Runs op on a borrowed connection to the node of slot (-1: any), and
     * follows MOVED and ASK (error replies: op did not run). An error reply
     * is a {@link RedisErrorException}; no reply an
     * {@link UnknownOutcomeException}, and op is not sent again.
     */
    private Object call(String what, int slot, Op op) {
        String askAt = null;
        for (int hop = 0;; hop++) {
            Pool p = askAt != null ? pool(askAt) : poolFor(slot);
            boolean asking = askAt != null;
            StatefulRedisConnection<byte[], byte[]> c = p.borrow();
            try {
                if (asking) {
                    c.sync().asking();
                }
                Object r = op.run(c.sync(), asking);
                p.giveBack(c);
                return r;
            } catch (RedisCommandExecutionException e) {
                p.giveBack(c); // an error reply: the connection is in step
                String m = String.valueOf(e.getMessage());
                String[] f = m.split(" ");
                if (kind == Kind.CLUSTER && hop < MAX_REDIRECTS && f.length >= 3 && (f[0].equals("MOVED") || f[0].equals("ASK"))) {
                    // The node did not run the command: sending it to the node
                    // named is its first run, not a resend.
                    if (f[0].equals("MOVED")) {
                        moved(Integer.parseInt(f[1]), f[2]);
                        askAt = null;
                    } else {
                        askAt = f[2];
                    }
                    continue;
                }
                if (m.startsWith("READONLY")) {
                    p.clear(); // a demoted master (a failover): new connections find the new one
                }
                throw new RedisErrorException("lockbridge: " + what + ": " + m, e);
            } catch (RuntimeException e) {
                p.drop(c);
                if (kind == Kind.CLUSTER) {
                    slotOwner = null; // read the topology again before the next command
                }
                if (e instanceof RedisCommandInterruptedException) {
                    Thread.currentThread().interrupt();
                }
                throw new UnknownOutcomeException("lockbridge: " + what + ": no reply (" + e.getClass().getSimpleName() + ": " + e.getMessage()
                        + "): it may or may not have run, and is not sent again", e);
            }
        }
    }

    /** A MOVED reply: slot is a's now; the rest of the map is read again before the next command. */
    private void moved(int slot, String a) {
        nodeUri(a);
        String[] m = slotOwner;
        String[] n = m == null ? new String[Keys.SLOTS] : m.clone();
        n[slot] = a;
        slotOwner = m == null ? null : n;
        if (m == null) {
            // no map: the retry goes by a full read
            return;
        }
        // Others of the node's slots may have moved too: read the whole map once more, lazily.
        staleAfterMove = true;
    }

    private volatile boolean staleAfterMove;

    /** {@link #eval} of a script whose reply is an array: a List of Long, byte[], List, null. */
    List<?> evalList(Script s, byte[][] keys, byte[]... args) {
        Object r = eval(s, ScriptOutputType.MULTI, keys, args);
        if (r instanceof List<?> l) {
            return l;
        }
        throw Replies.unexpected(s, r);
    }

    /** {@link #eval} of a script whose reply is an integer. */
    long evalLong(Script s, byte[][] keys, byte[]... args) {
        Object r = eval(s, ScriptOutputType.INTEGER, keys, args);
        if (r instanceof Long n) {
            return n;
        }
        throw Replies.unexpected(s, r);
    }

    /**
     * Runs s with EVALSHA, and with EVAL after a NOSCRIPT reply (which says
     * the script did not run). Sent once: no reply is an
     * {@link UnknownOutcomeException}, an error reply a {@link RedisErrorException}.
     */
    private Object eval(Script s, ScriptOutputType type, byte[][] keys, byte[]... args) {
        if (staleAfterMove) {
            staleAfterMove = false;
            slotOwner = null;
        }
        return call(s.name(), keys.length == 0 ? -1 : Keys.slot(keys[0]), (c, asking) -> {
            try {
                return c.evalsha(s.sha1(), type, keys, args);
            } catch (RedisNoScriptException e) {
                if (asking) {
                    c.asking();
                }
                return c.eval(s.source(), type, keys, args);
            }
        });
    }

    /** GET key (a read: changes nothing). */
    byte[] get(byte[] key) {
        return (byte[]) call("GET", Keys.slot(key), (c, asking) -> c.get(key));
    }

    /**
     * Calls onMessage on every message on channel until the returned handle
     * is closed, and on every confirmation of the subscription (the first,
     * and each one Lettuce makes after a reconnect: notices sent meanwhile
     * were lost). Returns once Redis confirmed the subscription; throws
     * {@link RedisUnavailableException} when it cannot subscribe (callers
     * then poll). In a cluster, a sharded subscription (SSUBSCRIBE) on the
     * channel's slot.
     */
    AutoCloseable subscribe(byte[] channel, Runnable onMessage) {
        ByteBuffer k = ByteBuffer.wrap(channel.clone());
        StatefulRedisPubSubConnection<byte[], byte[]> ps = pubsubConnection();
        synchronized (listeners) {
            listeners.computeIfAbsent(k, x -> new CopyOnWriteArraySet<>()).add(onMessage);
        }
        try {
            if (kind == Kind.CLUSTER) {
                ps.sync().ssubscribe(channel);
            } else {
                ps.sync().subscribe(channel);
            }
        } catch (RuntimeException e) {
            unsubscribe(ps, k, onMessage);
            throw new RedisUnavailableException("lockbridge: SUBSCRIBE: " + e.getMessage(), e);
        }
        return () -> unsubscribe(ps, k, onMessage);
    }

    /** Removes a listener; the last one of a channel unsubscribes it (a service's many lock names do not pile up). */
    private void unsubscribe(StatefulRedisPubSubConnection<byte[], byte[]> ps, ByteBuffer k, Runnable onMessage) {
        synchronized (listeners) {
            Set<Runnable> s = listeners.get(k);
            if (s == null || !s.remove(onMessage) || !s.isEmpty()) {
                return;
            }
            listeners.remove(k);
            if (ps.isOpen()) {
                byte[] ch = new byte[k.remaining()];
                k.duplicate().get(ch);
                if (kind == Kind.CLUSTER) {
                    ps.async().sunsubscribe(ch);
                } else {
                    ps.async().unsubscribe(ch);
                }
            }
        }
    }

    private void deliver(byte[] channel) {
        Set<Runnable> s = listeners.get(ByteBuffer.wrap(channel));
        if (s != null) {
            s.forEach(Runnable::run);
        }
    }

    private StatefulRedisPubSubConnection<byte[], byte[]> pubsubConnection() {
        synchronized (connMu) {
            if (closed) {
                throw new RedisUnavailableException("lockbridge: Redis connections closed", null);
            }
            if (pubsub != null) {
                return pubsub;
            }
            try {
                pubsub = kind == Kind.CLUSTER ? pubsubCluster.connectPubSub(ByteArrayCodec.INSTANCE)
                        : pubsubClient.connectPubSub(ByteArrayCodec.INSTANCE, uri);
                pubsub.setTimeout(timeout);
                pubsub.addListener(new RedisPubSubAdapter<>() {
                    @Override
                    public void message(byte[] channel, byte[] message) {
                        deliver(channel);
                    }

                    @Override
                    public void smessage(byte[] channel, byte[] message) {
                        deliver(channel);
                    }

                    // A (re)subscription confirmed — Lettuce resubscribes
                    // by itself after a reconnect — ends a gap in which
                    // notices may have been lost: every listener checks
                    // again, as after its first subscription.
                    @Override
                    public void subscribed(byte[] channel, long count) {
                        deliver(channel);
                    }

                    @Override
                    public void ssubscribed(byte[] channel, long count) {
                        deliver(channel);
                    }
                });
                return pubsub;
            } catch (RuntimeException e) {
                throw new RedisUnavailableException("lockbridge: cannot connect for pub/sub: " + e.getMessage(), e);
            }
        }
    }

    /**
     * Whether the pub/sub connection is up: while it is down (Lettuce
     * reconnecting) no notice reaches a subscriber.
     */
    boolean pubsubOpen() {
        synchronized (connMu) {
            return pubsub != null && pubsub.isOpen();
        }
    }

    /** Closes the connections and the clients. */
    @Override
    public void close() {
        synchronized (connMu) {
            closed = true;
            if (pubsub != null) {
                pubsub.close();
            }
        }
        pools.values().forEach(Pool::clear);
        client.shutdown();
        if (pubsubClient != null) {
            pubsubClient.shutdown();
        }
        if (pubsubCluster != null) {
            pubsubCluster.shutdown();
        }
        if (ownResources != null) {
            ownResources.shutdown();
        }
    }
}
