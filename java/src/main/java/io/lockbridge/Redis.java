package io.lockbridge;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;

/**
 * lockbridge-java's own connections to one Redis server, built so that a
 * lock write is sent at most once.
 *
 * <p>Lettuce, by default, re-queues the commands it had written but not
 * seen answered when a connection drops, and writes them again after it
 * reconnects (DefaultEndpoint.notifyDrainQueuedCommands moves them to its
 * disconnected buffer unless commands are rejected while disconnected). A
 * replayed owner-window release can delete a successor's lock. So the
 * command connection here is made with {@code autoReconnect(false)} and
 * {@code DisconnectedBehavior.REJECT_COMMANDS}: commands in flight when it
 * drops fail, nothing is replayed, and lockbridge reports an
 * {@link UnknownOutcomeException}. After a timeout or a drop the connection
 * is closed (a late reply must not be read as the next command's) and a new
 * one is opened for the next command. Pub/sub (release and phase notices)
 * uses a second connection that may reconnect: SUBSCRIBE changes no lock.
 *
 * <p>Build one with {@link #of(RedisURI)} or, in Spring, with
 * {@link SpringRedis#of}; share it between lockers; close it when done.
 */
public final class Redis implements AutoCloseable {
    /** The default command timeout. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

    private final RedisClient client;
    private final RedisClient pubsubClient;
    private final RedisURI uri;
    private final Duration timeout;

    private final Object connMu = new Object();
    private StatefulRedisConnection<byte[], byte[]> conn;
    private StatefulRedisPubSubConnection<byte[], byte[]> pubsub;
    private final Map<ByteBuffer, Set<Runnable>> listeners = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private Redis(RedisURI uri, ClientResources resources, Duration timeout) {
        this.uri = uri;
        this.timeout = timeout;
        this.client = resources == null ? RedisClient.create() : RedisClient.create(resources);
        this.client.setOptions(ClientOptions.builder()
                .autoReconnect(false)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .build());
        this.pubsubClient = resources == null ? RedisClient.create() : RedisClient.create(resources);
    }

    /** Connections to the server at uri, with the default timeout. */
    public static Redis of(RedisURI uri) {
        return of(uri, DEFAULT_TIMEOUT);
    }

    /** Connections to the server at uri; each command waits at most timeout for its reply. */
    public static Redis of(RedisURI uri, Duration timeout) {
        return of(uri, null, timeout);
    }

    static Redis of(RedisURI uri, ClientResources resources, Duration timeout) {
        if (uri == null || timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new InvalidException("lockbridge: Redis needs a RedisURI and a positive timeout");
        }
        if (uri.getSentinels() != null && !uri.getSentinels().isEmpty()) {
            throw new InvalidException("lockbridge: Redis Sentinel URIs are not supported by lockbridge-java yet; give the master's address");
        }
        return new Redis(uri, resources, timeout);
    }

    static byte[] arg(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] arg(long n) {
        return arg(Long.toString(n));
    }

    /** "PUBLISH" (a single server): the release scripts' notice command. */
    String publishCommand() {
        return "PUBLISH";
    }

    private StatefulRedisConnection<byte[], byte[]> connection() {
        synchronized (connMu) {
            if (closed) {
                throw new RedisUnavailableException("lockbridge: Redis connections closed", null);
            }
            if (conn != null && conn.isOpen()) {
                return conn;
            }
            if (conn != null) {
                conn.closeAsync();
                conn = null;
            }
            try {
                conn = client.connect(ByteArrayCodec.INSTANCE, uri);
                conn.setTimeout(timeout);
                return conn;
            } catch (RuntimeException e) {
                throw new RedisUnavailableException("lockbridge: cannot connect to " + uri.getHost() + ":" + uri.getPort() + ": " + e.getMessage(), e);
            }
        }
    }

    /** Drops c after a command whose reply did not come: a late reply must not be taken for the next one's. */
    private void drop(StatefulRedisConnection<byte[], byte[]> c) {
        synchronized (connMu) {
            if (conn == c) {
                conn = null;
            }
        }
        c.closeAsync();
    }

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
        StatefulRedisConnection<byte[], byte[]> c = connection();
        try {
            try {
                return c.sync().evalsha(s.sha1(), type, keys, args);
            } catch (RedisNoScriptException e) {
                return c.sync().eval(s.source(), type, keys, args);
            }
        } catch (RedisCommandExecutionException e) {
            throw new RedisErrorException("lockbridge: " + s.name() + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            drop(c);
            throw new UnknownOutcomeException("lockbridge: " + s.name() + ": no reply (" + e.getClass().getSimpleName() + ": "
                    + e.getMessage() + "): it may or may not have run, and is not sent again", e);
        }
    }

    /** GET key (a read: changes nothing). */
    byte[] get(byte[] key) {
        StatefulRedisConnection<byte[], byte[]> c = connection();
        try {
            return c.sync().get(key);
        } catch (RedisCommandExecutionException e) {
            throw new RedisErrorException("lockbridge: GET: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            drop(c);
            throw new UnknownOutcomeException("lockbridge: GET: no reply: " + e.getMessage(), e);
        }
    }

    /**
     * Calls onMessage on every message on channel until the returned handle
     * is closed. Returns once Redis confirmed the subscription; throws
     * {@link RedisUnavailableException} when it cannot subscribe (callers
     * then poll).
     */
    AutoCloseable subscribe(byte[] channel, Runnable onMessage) {
        ByteBuffer k = ByteBuffer.wrap(channel.clone());
        StatefulRedisPubSubConnection<byte[], byte[]> ps = pubsubConnection();
        synchronized (listeners) {
            listeners.computeIfAbsent(k, x -> new CopyOnWriteArraySet<>()).add(onMessage);
        }
        try {
            ps.sync().subscribe(channel);
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
                ps.async().unsubscribe(ch);
            }
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
                pubsub = pubsubClient.connectPubSub(ByteArrayCodec.INSTANCE, uri);
                pubsub.setTimeout(timeout);
                pubsub.addListener(new RedisPubSubAdapter<>() {
                    @Override
                    public void message(byte[] channel, byte[] message) {
                        Set<Runnable> s = listeners.get(ByteBuffer.wrap(channel));
                        if (s != null) {
                            s.forEach(Runnable::run);
                        }
                    }
                });
                return pubsub;
            } catch (RuntimeException e) {
                throw new RedisUnavailableException("lockbridge: cannot connect for pub/sub: " + e.getMessage(), e);
            }
        }
    }

    /** Closes the connections and the clients. */
    @Override
    public void close() {
        synchronized (connMu) {
            closed = true;
            if (conn != null) {
                conn.close();
            }
            if (pubsub != null) {
                pubsub.close();
            }
        }
        client.shutdown();
        pubsubClient.shutdown();
    }
}
