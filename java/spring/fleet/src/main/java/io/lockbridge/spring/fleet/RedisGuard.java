package io.lockbridge.spring.fleet;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * A guard on a redis-server of its own (not the lock's), shared by
 * contenders in several processes and languages: the counters of the
 * interop tests' guard (interop/main_test.go, the Java worker) — INCR
 * {@code cs:in}, an overlap when the result is not 1 (INCR
 * {@code cs:overlaps}), INCR {@code acq:<who>} and {@code total}; DECR
 * {@code cs:in} on leaving — each under a scope prefix, so contentions on
 * different locks share one server.
 */
public final class RedisGuard implements Guard, AutoCloseable {
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> conn;
    private final RedisCommands<String, String> cmd;
    private final String scope;

    /** A guard on the redis-server at host:port whose counters start with scope (may be empty). */
    public RedisGuard(String hostPort, String scope) {
        int colon = hostPort.lastIndexOf(':');
        this.client = RedisClient.create(
                RedisURI.create(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1))));
        this.conn = client.connect();
        this.cmd = conn.sync();
        this.scope = scope;
    }

    @Override
    public void enter(String who) {
        if (cmd.incr(scope + "cs:in") != 1) {
            cmd.incr(scope + "cs:overlaps");
        }
        cmd.incr(scope + "acq:" + who);
        cmd.incr(scope + "total");
    }

    @Override
    public void exit(String who) {
        cmd.decr(scope + "cs:in");
    }

    @Override
    public void close() {
        conn.close();
        client.shutdown();
    }
}
