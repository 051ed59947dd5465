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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
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
 * master id): each new connection asks the sentinels for the master, and
 * lockbridge listens to the sentinels' failover events (+promoted-slave,
 * +switch-master). When they name a new master the old master's connections
 * are closed, a reply that comes on one of them after that is an unknown
 * outcome (the old master may be one that was paused or cut off and still
 * takes writes), and the next call connects to the new master; so does a
 * READONLY reply. While no sentinel's events can be heard, calls refuse
 * before sending ({@link RedisUnavailableException}).
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
 * <p>Pub/sub (release and phase notices) uses separate connections that may
 * reconnect: SUBSCRIBE changes no lock. In a cluster each channel is
 * subscribed on the master of its slot, by lockbridge's own slot map, over a
 * pub/sub connection to that node: a release script publishes only when the
 * master counts a subscriber (SHARDNUMSUB counts that node's own), so a
 * subscription left on a master demoted by a failover would hear nothing.
 * When the map shows a channel's slot served by another node (a MOVED
 * reply, a re-read map), the channel is subscribed there again and its
 * listeners are woken once, so a waiter attempts again at once, as after
 * its first subscription.
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
    private final RedisClient pubsubClient;

    private final Map<String, Pool> pools = new ConcurrentHashMap<>();
    private final Object slotMu = new Object();
    private volatile String[] slotOwner; // cluster: "host:port" of each slot's master, null until read
    private final Map<String, RedisURI> nodes = new ConcurrentHashMap<>();

    private final Object connMu = new Object();
    /** Pub/sub connections: in a cluster one per node ("host:port"), else one under "". Guarded by connMu. */
    private final Map<String, StatefulRedisPubSubConnection<byte[], byte[]>> pubsubs = new java.util.HashMap<>();
    private final Map<ByteBuffer, Set<Runnable>> listeners = new ConcurrentHashMap<>();
    /** The node each channel is subscribed on, once Redis confirmed it ("" but in a cluster). Guarded by listeners. */
    private final Map<ByteBuffer, String> homes = new java.util.HashMap<>();
    /** Cluster, Sentinel: subscribes channels again on their slot's (the) new master, off the callers' threads. */
    private final ExecutorService rehomer;
    /** Sentinel: what the sentinels say of a failover; null otherwise. */
    private final SentinelWatch watch;
    private volatile boolean closed;

    private Redis(Kind kind, RedisURI uri, List<RedisURI> seeds, ClientResources resources, Duration timeout,
            boolean replay) {
        this.kind = kind;
        this.uri = uri;
        this.seeds = seeds;
        this.timeout = timeout;
        this.ownResources = resources == null ? DefaultClientResources.create() : null;
        ClientResources res = resources == null ? ownResources : resources;
        this.client = RedisClient.create(res);
        // replay: only for the tests that show what a resend does.
        this.client.setOptions(replay ? ClientOptions.builder().autoReconnect(true).build()
                : ClientOptions.builder().autoReconnect(false)
                        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS).build());
        this.pubsubClient = RedisClient.create(res);
        if (kind == Kind.CLUSTER) {
            for (RedisURI seed : seeds) {
                nodes.put(addr(seed.getHost(), seed.getPort()), seed);
            }
        }
        this.rehomer = kind == Kind.STANDALONE ? null
                : Executors.newSingleThreadExecutor(Threads.daemon("lockbridge-pubsub-rehome"));
        this.watch = kind == Kind.SENTINEL ? new SentinelWatch(res) : null;
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
        checkTimeout(seeds != null && !seeds.isEmpty() && seeds.stream().allMatch(java.util.Objects::nonNull), timeout,
                "the cluster's seed RedisURIs");
        for (RedisURI seed : seeds) {
            if (seed.getSentinels() != null && !seed.getSentinels().isEmpty()) {
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
                for (String node : owners()) {
                    Pool pool = pool(node);
                    pool.giveBack(pool.borrow());
                }
            } else {
                if (watch != null) {
                    watch.check();
                }
                Pool pool = pool(null);
                pool.giveBack(pool.borrow());
            }
        } catch (RedisUnavailableException | InvalidException e) {
            // connect on the first call
        }
        return this;
    }

    Kind kind() {
        return kind;
    }

    static byte[] arg(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] arg(long number) {
        return arg(Long.toString(number));
    }

    /** The release scripts' notice command: "SPUBLISH" in a cluster (as Go's lockers), else "PUBLISH". */
    String publishCommand() {
        return kind == Kind.CLUSTER ? "SPUBLISH" : "PUBLISH";
    }

    private static String addr(String host, int port) {
        return host + ":" + port;
    }

    /** The pool of node ("host:port"), or, with a null node, of the standalone server or Sentinel master. */
    private Pool pool(String node) {
        String key = node == null ? "" : node;
        return pools.computeIfAbsent(key, x -> new Pool(node == null ? uri : nodeUri(node)));
    }

    private RedisURI nodeUri(String node) {
        RedisURI known = nodes.get(node);
        if (known != null) {
            return known;
        }
        int colon = node.lastIndexOf(':');
        RedisURI candidate = RedisURI.builder(uri).withHost(node.substring(0, colon))
                .withPort(Integer.parseInt(node.substring(colon + 1))).build();
        nodes.putIfAbsent(node, candidate);
        return nodes.get(node);
    }

    /**
     * A node's connections: each call borrows one for itself and gives it
     * back after a reply; a connection whose command got no reply is closed,
     * alone.
     */
    private final class Pool {
        final RedisURI target;
        final ConcurrentLinkedDeque<StatefulRedisConnection<byte[], byte[]>> idle = new ConcurrentLinkedDeque<>();
        /** Each open connection's CLIENT ID, read when it connected (absent: refused, e.g. by an ACL). */
        final Map<StatefulRedisConnection<byte[], byte[]>, Long> ids = new ConcurrentHashMap<>();
        /**
         * Sentinel: the sentinels named a new master since this pool's
         * connections asked them; no reply on them is trusted.
         */
        volatile boolean retired;

        Pool(RedisURI target) {
            this.target = target;
        }

        StatefulRedisConnection<byte[], byte[]> borrow() {
            for (StatefulRedisConnection<byte[], byte[]> conn; (conn = idle.pollFirst()) != null;) {
                if (conn.isOpen()) {
                    return conn;
                }
                quietClose(conn);
            }
            if (closed) {
                throw new RedisUnavailableException("lockbridge: Redis connections closed", null);
            }
            try {
                StatefulRedisConnection<byte[], byte[]> conn = client.connect(ByteArrayCodec.INSTANCE, target);
                conn.setTimeout(timeout);
                clientId(conn);
                return conn;
            } catch (RuntimeException e) {
                throw new RedisUnavailableException("lockbridge: cannot connect to " + where() + ": "
                        + e.getMessage(), e);
            }
        }

        void giveBack(StatefulRedisConnection<byte[], byte[]> conn) {
            if (!closed && !retired && conn.isOpen() && idle.size() < MAX_IDLE) {
                idle.offerFirst(conn);
                if (closed || retired) {
                    clear();
                }
            } else {
                quietClose(conn);
            }
        }

        /** Closes conn, whose command got no reply: a late reply must not be taken for the next command's. */
        void drop(StatefulRedisConnection<byte[], byte[]> conn) {
            ids.remove(conn);
            quietClose(conn);
        }

        /** Records conn's CLIENT ID; a refusal (NOPERM) leaves it unknown, no reply closes conn. */
        private void clientId(StatefulRedisConnection<byte[], byte[]> conn) {
            try {
                ids.put(conn, conn.sync().clientId());
            } catch (RedisCommandExecutionException e) {
                // unknown: a request lost on conn is never settled by a kill
            } catch (RuntimeException e) {
                quietClose(conn);
                throw e;
            }
        }

        /**
         * Ends c, the connection whose CLIENT ID is id, dropped after its
         * command got no reply, on the server too (CLIENT KILL ID on another
         * connection to the same node): the
         * server discards what it has not read of c, and bytes of c still
         * on their way reach a closed socket, so c's command can no longer
         * run. True only when the server confirms it killed c. Never
         * behind Sentinel: the master a pool connects to is not one server,
         * so the kill might not reach the server c went to.
         */
        boolean kill(Long id) {
            if (id == null || kind == Kind.SENTINEL || closed) {
                return false;
            }
            StatefulRedisConnection<byte[], byte[]> killer;
            try {
                killer = borrow();
            } catch (RuntimeException e) {
                return false;
            }
            try {
                Long killed = killer.sync().clientKill(io.lettuce.core.KillArgs.Builder.id(id));
                giveBack(killer);
                return killed != null && killed == 1;
            } catch (RedisCommandExecutionException e) {
                giveBack(killer); // NOPERM (an ACL without CLIENT KILL): not stopped
                return false;
            } catch (RuntimeException e) {
                drop(killer);
                return false;
            }
        }

        void clear() {
            for (StatefulRedisConnection<byte[], byte[]> conn; (conn = idle.pollFirst()) != null;) {
                ids.remove(conn);
                quietClose(conn);
            }
        }

        String where() {
            if (target.getSentinels() != null && !target.getSentinels().isEmpty()) {
                return "the master " + target.getSentinelMasterId() + " of sentinels " + target.getSentinels();
            }
            return target.getHost() + ":" + target.getPort();
        }
    }

    private static void quietClose(StatefulRedisConnection<byte[], byte[]> conn) {
        if (conn.isOpen()) {
            conn.closeAsync();
        }
    }

    /** The cluster's slot map, read with CLUSTER SLOTS when not known. */
    private String[] slots() {
        String[] map = slotOwner;
        if (map != null) {
            return map;
        }
        synchronized (slotMu) {
            if (slotOwner != null) {
                return slotOwner;
            }
            List<String> from = new ArrayList<>();
            seeds.forEach(s -> from.add(addr(s.getHost(), s.getPort())));
            nodes.keySet().forEach(node -> {
                if (!from.contains(node)) {
                    from.add(node);
                }
            });
            RuntimeException last = null;
            for (String node : from) {
                Pool pool = pool(node);
                StatefulRedisConnection<byte[], byte[]> conn;
                try {
                    conn = pool.borrow();
                } catch (RedisUnavailableException e) {
                    last = e;
                    continue;
                }
                try {
                    List<Object> ranges = conn.sync().clusterSlots();
                    pool.giveBack(conn);
                    String[] owner = new String[Keys.SLOTS];
                    // CLUSTER SLOTS: [from, to, [host, port, id, …] of the master, replicas…] per range.
                    for (Object entry : ranges) {
                        List<?> range = (List<?>) entry;
                        List<?> master = (List<?>) range.get(2);
                        Object hostReply = master.get(0);
                        String host = hostReply instanceof byte[] hostBytes
                                ? new String(hostBytes, StandardCharsets.UTF_8) : String.valueOf(hostReply);
                        String masterAddr = addr(host.isEmpty() ? node.substring(0, node.lastIndexOf(':')) : host,
                                ((Long) master.get(1)).intValue());
                        nodeUri(masterAddr);
                        for (int slot = ((Long) range.get(0)).intValue(); slot <= ((Long) range.get(1)).intValue();
                                slot++) {
                            owner[slot] = masterAddr;
                        }
                    }
                    slotOwner = owner;
                    rehome(owner);
                    return owner;
                } catch (RuntimeException e) {
                    pool.drop(conn);
                    last = e;
                }
            }
            throw new RedisUnavailableException("lockbridge: cannot read the cluster's slot map from " + from + ": "
                    + (last == null ? "no node" : last.getMessage()), last);
        }
    }

    private List<String> owners() {
        Set<String> unique = new java.util.LinkedHashSet<>();
        for (String owner : slots()) {
            if (owner != null) {
                unique.add(owner);
            }
        }
        return new ArrayList<>(unique);
    }

    private Pool poolFor(int slot) {
        if (kind != Kind.CLUSTER) {
            return pool(null);
        }
        String owner = slot < 0 ? addr(uri.getHost(), uri.getPort()) : slots()[slot];
        if (owner == null) {
            slotOwner = null;
            throw new RedisUnavailableException("lockbridge: no cluster node serves slot " + slot, null);
        }
        return pool(owner);
    }

    /** One command on a connection: asking says an ASKING came before it, to send again before a second command. */
    private interface Op {
        Object run(RedisCommands<byte[], byte[]> commands, boolean asking);
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
            if (watch != null) {
                watch.check();
            }
            Pool pool = askAt != null ? pool(askAt) : poolFor(slot);
            boolean asking = askAt != null;
            StatefulRedisConnection<byte[], byte[]> conn = pool.borrow();
            try {
                if (asking) {
                    conn.sync().asking();
                }
                Object reply = op.run(conn.sync(), asking);
                if (pool.retired) {
                    // The sentinels named a new master while the command was in
                    // flight: it ran on a master they had replaced (one that was
                    // paused or cut off, say), which others no longer lock on.
                    pool.drop(conn);
                    UnknownOutcomeException unknown = new UnknownOutcomeException("lockbridge: " + what
                            + ": the sentinels named a new master while it was in flight:"
                            + " its reply, from the old one, is not trusted; it is not sent again", null);
                    unknown.stopper = () -> true; // its reply came: it ran, on the old master, and cannot run again
                    throw unknown;
                }
                if (reply instanceof Waited waited && waited.waitError() != null
                        && !(waited.waitError() instanceof RedisCommandExecutionException)) {
                    pool.drop(conn); // WAIT got no reply: a late one must not be read as the next command's
                } else {
                    pool.giveBack(conn);
                }
                return reply;
            } catch (RedisCommandExecutionException e) {
                pool.giveBack(conn); // an error reply: the connection is in step
                String message = String.valueOf(e.getMessage());
                String[] words = message.split(" ");
                if (kind == Kind.CLUSTER && hop < MAX_REDIRECTS && words.length >= 3
                        && (words[0].equals("MOVED") || words[0].equals("ASK"))) {
                    // The node did not run the command: sending it to the node
                    // named is its first run, not a resend.
                    if (words[0].equals("MOVED")) {
                        moved(Integer.parseInt(words[1]), words[2]);
                        askAt = null;
                    } else {
                        askAt = words[2];
                    }
                    continue;
                }
                if (message.startsWith("READONLY")) {
                    pool.clear(); // a demoted master (a failover): new connections find the new one
                }
                throw new RedisErrorException("lockbridge: " + what + ": " + message, e);
            } catch (RuntimeException e) {
                Long id = pool.ids.get(conn);
                pool.drop(conn);
                if (kind == Kind.CLUSTER) {
                    slotOwner = null; // read the topology again before the next command
                }
                if (e instanceof RedisCommandInterruptedException) {
                    Thread.currentThread().interrupt();
                }
                UnknownOutcomeException unknown = new UnknownOutcomeException("lockbridge: " + what + ": no reply ("
                        + e.getClass().getSimpleName() + ": "
                        + e.getMessage() + "): it may or may not have run, and is not sent again", e);
                unknown.stopper = () -> pool.kill(id);
                throw unknown;
            }
        }
    }

    /** A MOVED reply: slot is node's now; the rest of the map is read again before the next command. */
    private void moved(int slot, String node) {
        nodeUri(node);
        String[] current = slotOwner;
        String[] updated = current == null ? new String[Keys.SLOTS] : current.clone();
        updated[slot] = node;
        slotOwner = current == null ? null : updated;
        if (current == null) {
            // no map: the retry goes by a full read
            return;
        }
        rehome(updated);
        // Others of the node's slots may have moved too: read the whole map once more, lazily.
        staleAfterMove = true;
    }

    private volatile boolean staleAfterMove;

    /** {@link #eval} of a script whose reply is an array: a List of Long, byte[], List, null. */
    List<?> evalList(Script script, byte[][] keys, byte[]... args) {
        Object reply = eval(script, ScriptOutputType.MULTI, keys, args);
        if (reply instanceof List<?> list) {
            return list;
        }
        throw Replies.unexpected(script, reply);
    }

    /** {@link #eval} of a script whose reply is an integer. */
    long evalLong(Script script, byte[][] keys, byte[]... args) {
        Object reply = eval(script, ScriptOutputType.INTEGER, keys, args);
        if (reply instanceof Long value) {
            return value;
        }
        throw Replies.unexpected(script, reply);
    }

    /**
     * Runs script with EVALSHA, and with EVAL after a NOSCRIPT reply (which says
     * the script did not run). Sent once: no reply is an
     * {@link UnknownOutcomeException}, an error reply a {@link RedisErrorException}.
     */
    private Object eval(Script script, ScriptOutputType type, byte[][] keys, byte[]... args) {
        return call(script.name(), evalSlot(keys), (c, asking) -> evalOn(c, asking, script, type, keys, args));
    }

    private int evalSlot(byte[][] keys) {
        if (staleAfterMove) {
            staleAfterMove = false;
            slotOwner = null;
        }
        return keys.length == 0 ? -1 : Keys.slot(keys[0]);
    }

    private static Object evalOn(RedisCommands<byte[], byte[]> commands, boolean asking, Script script,
            ScriptOutputType type, byte[][] keys, byte[]... args) {
        try {
            return commands.evalsha(script.sha1(), type, keys, args);
        } catch (RedisNoScriptException e) {
            if (asking) {
                commands.asking();
            }
            return commands.eval(script.source(), type, keys, args);
        }
    }

    /**
     * A script's reply, and what WAIT said after it on the same connection:
     * how many replicas acknowledged, or the error of a WAIT that failed
     * (then acked is 0).
     */
    record Waited(Object reply, long acked, RuntimeException waitError) {
        /** Whether at least replicas acknowledged (a WAIT that failed: not acknowledged). */
        boolean acknowledged(int replicas) {
            return waitError == null && acked >= replicas;
        }
    }

    /** {@link #evalWait} of a script whose reply is an array (a List, as {@link #evalList}'s). */
    Waited evalListWait(Script script, byte[][] keys, int replicas, Duration waitTimeout, byte[]... args) {
        return evalWait(script, ScriptOutputType.MULTI, List.class, keys, replicas, waitTimeout, args);
    }

    /** {@link #evalWait} of a script whose reply is an integer (a Long, as {@link #evalLong}'s). */
    Waited evalLongWait(Script script, byte[][] keys, int replicas, Duration waitTimeout, byte[]... args) {
        return evalWait(script, ScriptOutputType.INTEGER, Long.class, keys, replicas, waitTimeout, args);
    }

    /**
     * {@link #eval} of script, then, on the same connection, WAIT replicas
     * timeout: how many replicas acknowledged the script's writes. The
     * script is sent once, as by eval; a WAIT that fails does not make the
     * script's reply unknown (it is returned with the error).
     */
    private Waited evalWait(Script script, ScriptOutputType type, Class<?> replyType, byte[][] keys, int replicas,
            Duration waitTimeout, byte[]... args) {
        Object result = call(script.name(), evalSlot(keys), (commands, asking) -> {
            Object reply = evalOn(commands, asking, script, type, keys, args);
            io.lettuce.core.api.StatefulConnection<byte[], byte[]> conn = commands.getStatefulConnection();
            conn.setTimeout(timeout.plus(waitTimeout));
            try {
                return new Waited(reply, commands.waitForReplication(replicas, waitTimeout.toMillis()), null);
            } catch (RuntimeException e) {
                if (e instanceof RedisCommandInterruptedException) {
                    Thread.currentThread().interrupt();
                }
                return new Waited(reply, 0, e);
            } finally {
                conn.setTimeout(timeout);
            }
        });
        Waited waited = (Waited) result;
        if (!replyType.isInstance(waited.reply())) {
            throw Replies.unexpected(script, waited.reply());
        }
        return waited;
    }

    /**
     * SET key value NX PX millis: whether it was set. Sent once, as
     * {@link #eval}: no reply is an {@link UnknownOutcomeException}.
     */
    boolean setNxPx(byte[] key, byte[] value, long millis) {
        SetArgs nxpx = SetArgs.Builder.nx().px(millis);
        return "OK".equals(call("SET", Keys.slot(key), (c, asking) -> c.set(key, value, nxpx)));
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
     * master of the channel's slot, moved to the slot's new master when the
     * slot map changes (onMessage is then called once).
     *
     * <p>A channel whose subscription Redis has confirmed, and that has not
     * been unsubscribed since (it has listeners all along), is not
     * subscribed again: the new listener hears every message from the moment
     * it is added, so it returns at once — the waiters of one key in one
     * process pay one SUBSCRIBE between them, not one each.
     */
    AutoCloseable subscribe(byte[] channel, Runnable onMessage) {
        ByteBuffer channelKey = ByteBuffer.wrap(channel.clone());
        boolean confirmed;
        synchronized (listeners) {
            listeners.computeIfAbsent(channelKey, x -> new CopyOnWriteArraySet<>()).add(onMessage);
            confirmed = homes.containsKey(channelKey);
        }
        if (!confirmed) {
            try {
                subscribeAt(channelKey, kind == Kind.CLUSTER ? slots()[Keys.slot(channel)] : "");
            } catch (RuntimeException e) {
                unsubscribe(channelKey, onMessage);
                throw new RedisUnavailableException("lockbridge: SUBSCRIBE: " + e.getMessage(), e);
            }
        }
        return () -> unsubscribe(channelKey, onMessage);
    }

    /**
     * Subscribes channelKey on node (cluster: SSUBSCRIBE, following MOVED; else
     * SUBSCRIBE on the one pub/sub connection) and, in a cluster, records
     * where, unsubscribing it from the node it was on before. Idempotent: a
     * second SSUBSCRIBE of a channel is confirmed again by Redis.
     */
    private void subscribeAt(ByteBuffer channelKey, String node) {
        byte[] channel = bytes(channelKey);
        if (kind != Kind.CLUSTER) {
            pubsubConnection("").sync().subscribe(channel);
            synchronized (listeners) {
                if (listeners.containsKey(channelKey)) {
                    homes.put(channelKey, ""); // confirmed
                }
            }
            return;
        }
        for (int hop = 0;; hop++) {
            if (node == null) {
                slotOwner = null;
                throw new RedisUnavailableException("lockbridge: no cluster node serves slot " + Keys.slot(channel),
                        null);
            }
            try {
                pubsubConnection(node).sync().ssubscribe(channel);
            } catch (RedisCommandExecutionException e) {
                String[] words = String.valueOf(e.getMessage()).split(" ");
                if (hop < MAX_REDIRECTS && words.length >= 3 && words[0].equals("MOVED")) {
                    moved(Integer.parseInt(words[1]), words[2]);
                    node = words[2];
                    continue;
                }
                throw e;
            }
            String old;
            synchronized (listeners) {
                if (!listeners.containsKey(channelKey)) {
                    // the last listener left meanwhile
                    pubsubConnection(node).async().sunsubscribe(channel);
                    return;
                }
                old = homes.put(channelKey, node);
            }
            if (old != null && !old.equals(node)) {
                leave(old, channel, true);
            }
            return;
        }
    }

    /**
     * SUNSUBSCRIBE channel on node; with close, node's pub/sub connection is closed
     * instead once no channel is subscribed there (a node that lost its
     * slots, perhaps gone: its connection would reconnect for ever).
     */
    private void leave(String node, byte[] channel, boolean close) {
        boolean idle;
        synchronized (listeners) {
            idle = close && !homes.containsValue(node);
        }
        synchronized (connMu) {
            StatefulRedisPubSubConnection<byte[], byte[]> pubsub = pubsubs.get(node);
            if (pubsub == null) {
                return;
            }
            if (idle) {
                pubsubs.remove(node);
                pubsub.closeAsync();
            } else if (pubsub.isOpen()) {
                pubsub.async().sunsubscribe(channel);
            }
        }
    }

    /**
     * The slot map changed: every channel subscribed on a node that no
     * longer serves its slot is subscribed again on the one that does, in
     * the background; its listeners are then woken once (a waiter attempts
     * again, as after its first subscription: a release meanwhile may have
     * published where nobody of ours listened).
     */
    private void rehome(String[] owner) {
        List<ByteBuffer> moved = new ArrayList<>();
        synchronized (listeners) {
            homes.forEach((channelKey, node) -> {
                String want = owner[Keys.slot(bytes(channelKey))];
                if (want != null && !want.equals(node)) {
                    moved.add(channelKey);
                }
            });
        }
        for (ByteBuffer channelKey : moved) {
            try {
                rehomer.execute(() -> {
                    String[] map = slotOwner;
                    String want = map == null ? null : map[Keys.slot(bytes(channelKey))];
                    try {
                        if (want != null && !closed) {
                            subscribeAt(channelKey, want);
                        }
                    } catch (RuntimeException e) {
                        // unreachable for now: the waiters poll; the next map change tries again
                    }
                    deliver(bytes(channelKey));
                });
            } catch (java.util.concurrent.RejectedExecutionException e) {
                return; // closed
            }
        }
    }

    /**
     * node unsubscribed channel: ours (a listener left, a re-home), or
     * the server's own when its slot left the node (Redis does so on the
     * master a failover demotes). The server's: the channel no longer counts
     * as confirmed (the next listener to come subscribes it, should what
     * follows fail), the slot map is read again and the channel subscribed
     * on the slot's master, in the background, then its listeners are woken
     * once.
     */
    private void dropped(String node, byte[] channel) {
        ByteBuffer channelKey = ByteBuffer.wrap(channel.clone());
        synchronized (listeners) {
            if (!listeners.containsKey(channelKey) || !node.equals(homes.get(channelKey))) {
                return; // ours
            }
            // Subscribed nowhere now: until it is again, a newcomer subscribes
            // it itself (it must not take the dropped subscription for its own).
            homes.remove(channelKey);
        }
        try {
            rehomer.execute(() -> {
                try {
                    // The nodes learn of the failover one by one: read the map
                    // until it names another master for the slot (10 s at most).
                    for (int i = 0; i < 100 && !closed; i++) {
                        slotOwner = null;
                        String want = slots()[Keys.slot(channel)];
                        if (want != null && !want.equals(node)) {
                            subscribeAt(channelKey, want);
                            break;
                        }
                        Thread.sleep(100);
                    }
                } catch (RuntimeException e) {
                    // unreachable for now: the waiters poll; the next map change tries again
                } catch (InterruptedException e) {
                    return; // closed
                }
                deliver(channel);
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closed
        }
    }

    private static byte[] bytes(ByteBuffer buffer) {
        byte[] copy = new byte[buffer.remaining()];
        buffer.duplicate().get(copy);
        return copy;
    }

    /**
     * Removes a listener; the last one of a channel unsubscribes it (a
     * service's many lock names do not pile up). The UNSUBSCRIBE is sent
     * (asynchronously) before the listeners' lock is let go, so that it goes
     * out before the SUBSCRIBE of a listener that comes next: sent after it,
     * it would leave that listener deaf.
     */
    private void unsubscribe(ByteBuffer channelKey, Runnable onMessage) {
        synchronized (listeners) {
            Set<Runnable> subscribers = listeners.get(channelKey);
            if (subscribers == null || !subscribers.remove(onMessage) || !subscribers.isEmpty()) {
                return;
            }
            listeners.remove(channelKey);
            String home = homes.remove(channelKey);
            Runnable hook = beforeUnsubscribe;
            if (hook != null) {
                hook.run();
            }
            if (kind == Kind.CLUSTER) {
                if (home != null) {
                    leave(home, bytes(channelKey), false);
                }
                return;
            }
            synchronized (connMu) {
                StatefulRedisPubSubConnection<byte[], byte[]> pubsub = pubsubs.get("");
                if (pubsub != null && pubsub.isOpen()) {
                    pubsub.async().unsubscribe(bytes(channelKey));
                }
            }
        }
    }

    /** Tests only: runs when the last listener of a channel has left, just before its UNSUBSCRIBE is sent. */
    volatile Runnable beforeUnsubscribe;

    private void deliver(byte[] channel) {
        Set<Runnable> subscribers = listeners.get(ByteBuffer.wrap(channel));
        if (subscribers != null) {
            subscribers.forEach(Runnable::run);
        }
    }

    /** The pub/sub connection to node (a cluster node "host:port"; "" the standalone server or Sentinel master). */
    private StatefulRedisPubSubConnection<byte[], byte[]> pubsubConnection(String node) {
        synchronized (connMu) {
            if (closed) {
                throw new RedisUnavailableException("lockbridge: Redis connections closed", null);
            }
            StatefulRedisPubSubConnection<byte[], byte[]> pubsub = pubsubs.get(node);
            if (pubsub != null) {
                return pubsub;
            }
            try {
                pubsub = pubsubClient.connectPubSub(ByteArrayCodec.INSTANCE, node.isEmpty() ? uri : nodeUri(node));
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

                    @Override
                    public void sunsubscribed(byte[] channel, long count) {
                        if (!node.isEmpty()) {
                            dropped(node, channel);
                        }
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
                pubsubs.put(node, pubsub);
                return pubsub;
            } catch (RuntimeException e) {
                throw new RedisUnavailableException("lockbridge: cannot connect for pub/sub: " + e.getMessage(), e);
            }
        }
    }

    /**
     * Sentinel: a subscription on each sentinel to the events that say it
     * names a new master: "+promoted-slave" (the sentinel that runs the
     * failover names the replica it promoted from then on) and
     * "+switch-master" (every sentinel, once it has the new configuration).
     * Connections to the master are pooled, and a pooled connection goes on
     * reaching the master it was made to: one the sentinels replaced while
     * it was paused or cut off from them still takes writes as a master
     * until they reach it again and demote it (seconds later, or never while
     * the cut lasts), so a lock taken there is a second holder beside the
     * one on the new master. On such an event the pool is retired — its idle
     * connections closed, a reply that comes on one of its connections
     * afterwards distrusted ({@link UnknownOutcomeException}) — and the next
     * call asks the sentinels again. While no subscription is confirmed, a
     * switch may go unheard: calls refuse before sending
     * ({@link RedisUnavailableException}); a subscription confirmed again
     * after a disconnect retires the pool too. Go's lockers get the same from
     * go-redis's failover client (+switch-master).
     */
    private final class SentinelWatch implements io.lettuce.core.RedisConnectionStateListener {
        static final String SWITCH = "+switch-master";
        static final String PROMOTED = "+promoted-slave";
        private final RedisClient watchClient;
        private final String master = uri.getSentinelMasterId();
        private volatile String named; // the master a sentinel event named last
        /** The connection of each sentinel ("host:port"). Guarded by this. */
        private final Map<String, StatefulRedisPubSubConnection<String, String>> conns = new java.util.HashMap<>();
        private final Set<Object> live = ConcurrentHashMap.newKeySet(); // confirmed and connected since
        private final Set<Object> seen = ConcurrentHashMap.newKeySet(); // confirmed at least once

        SentinelWatch(ClientResources res) {
            watchClient = RedisClient.create(res);
            watchClient.addListener(this);
        }

        /**
         * Subscribes on the sentinels not yet connected when none is confirmed;
         * refuses (nothing sent) when none can be.
         */
        void check() {
            if (!live.isEmpty()) {
                return;
            }
            synchronized (this) {
                for (RedisURI sentinel : uri.getSentinels()) {
                    String sentinelAddr = addr(sentinel.getHost(), sentinel.getPort());
                    if (closed || conns.containsKey(sentinelAddr)) {
                        continue; // a connection that lost its sentinel subscribes again when it reconnects
                    }
                    StatefulRedisPubSubConnection<String, String> conn = null;
                    try {
                        // Our timeout, not the URI's (60 s by default), for the handshake of a hung sentinel.
                        conn = watchClient.connectPubSub(io.lettuce.core.codec.StringCodec.UTF8,
                                RedisURI.builder(sentinel).withTimeout(timeout).build());
                        conn.setTimeout(timeout);
                        conn.addListener(listener(conn));
                        conns.put(sentinelAddr, conn);
                        conn.sync().subscribe(SWITCH, PROMOTED);
                        confirmed(conn);
                    } catch (RuntimeException e) {
                        // this sentinel is not reachable now: tried again by the next call that finds none confirmed
                        if (conn != null) {
                            conns.remove(sentinelAddr);
                            conn.closeAsync();
                        }
                    }
                }
            }
            if (live.isEmpty()) {
                throw new RedisUnavailableException("lockbridge: cannot watch the sentinels " + uri.getSentinels()
                        + " for a failover (SUBSCRIBE " + SWITCH + " " + PROMOTED + "): nothing sent", null);
            }
        }

        private RedisPubSubAdapter<String, String> listener(Object conn) {
            return new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    String[] words = message == null ? new String[0] : message.split(" ");
                    String now = null;
                    if (SWITCH.equals(channel) && words.length >= 5 && words[0].equals(master)) {
                        now = words[3] + ":" + words[4]; // <master> <old ip> <old port> <new ip> <new port>
                    } else if (PROMOTED.equals(channel) && words.length >= 6 && words[4].equals("@")
                            && words[5].equals(master)) {
                        now = words[2] + ":" + words[3]; // slave <ip:port> <ip> <port> @ <master> <ip> <port>
                    }
                    if (now != null && !now.equals(named)) {
                        named = now;
                        switched();
                    }
                }

                @Override
                public void subscribed(String channel, long count) {
                    confirmed(conn);
                }
            };
        }

        /** conn's subscription is confirmed; again after a disconnect, a switch meanwhile may have gone unheard. */
        private void confirmed(Object conn) {
            if (live.add(conn) && !seen.add(conn)) {
                switched();
            }
        }

        @Override
        public void onRedisDisconnected(io.lettuce.core.RedisChannelHandler<?, ?> connection) {
            if (live.remove(connection) && live.isEmpty()) {
                switched();
            }
        }

        void close() {
            watchClient.shutdown();
        }
    }

    /**
     * Sentinel: the master may have changed. The pool is retired (its idle
     * connections closed; a reply on one in use is not trusted), so that the
     * next call asks the sentinels; the release-notice subscriptions are made
     * again on the master they name, and their listeners woken once. Until a
     * channel is subscribed again it no longer counts as confirmed: one that
     * cannot be (the new master unreachable or refusing it) is subscribed by
     * the next listener that comes.
     */
    private void switched() {
        Pool old = pools.get("");
        if (old != null) {
            old.retired = true;
            pools.remove("", old);
            old.clear();
        }
        try {
            rehomer.execute(() -> {
                StatefulRedisPubSubConnection<byte[], byte[]> pubsub;
                synchronized (connMu) {
                    pubsub = pubsubs.remove("");
                }
                synchronized (listeners) {
                    // No channel is subscribed now: until one is again here, a
                    // newcomer subscribes it itself (it must not take the old
                    // master's subscription for its own, confirmed).
                    homes.clear();
                }
                if (pubsub == null) {
                    return;
                }
                pubsub.closeAsync();
                for (ByteBuffer channelKey : new ArrayList<>(listeners.keySet())) {
                    try {
                        if (!closed && listeners.containsKey(channelKey)) {
                            subscribeAt(channelKey, "");
                        }
                    } catch (RuntimeException e) {
                        // unreachable for now: the waiters poll
                    }
                    deliver(bytes(channelKey));
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closed
        }
    }

    /**
     * Whether every pub/sub connection is up: while one is down (Lettuce
     * reconnecting) no notice on its channels reaches a subscriber. False
     * before the first subscription.
     */
    boolean pubsubOpen() {
        synchronized (connMu) {
            return !pubsubs.isEmpty() && pubsubs.values().stream().allMatch(StatefulRedisPubSubConnection::isOpen);
        }
    }

    /** Closes the connections and the clients. */
    @Override
    public void close() {
        synchronized (connMu) {
            closed = true;
            pubsubs.values().forEach(StatefulRedisPubSubConnection::close);
            pubsubs.clear();
        }
        if (rehomer != null) {
            rehomer.shutdownNow();
        }
        if (watch != null) {
            watch.close();
        }
        pools.values().forEach(Pool::clear);
        client.shutdown();
        pubsubClient.shutdown();
        if (ownResources != null) {
            ownResources.shutdown();
        }
    }
}
