package io.lockbridge;

import java.io.File;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;

/**
 * A real redis-server for a test class, on a free loopback port, with no
 * persistence; and a plain client on it to check the bytes stored. A
 * missing redis-server fails the test with the command that installs it.
 */
final class RedisServer implements AutoCloseable {
    static final String INSTALL = "redis-server not found on PATH: install it (sudo apt-get install -y redis-server, "
            + "or run ./scripts/setup.sh)";

    private Process proc;
    private final String bin;
    final int port;
    private final RedisClient client;
    private final StatefulRedisConnection<byte[], byte[]> conn;
    final RedisCommands<byte[], byte[]> raw;

    RedisServer() throws Exception {
        bin = find();
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        proc = spawn();
        client = RedisClient.create();
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        StatefulRedisConnection<byte[], byte[]> connected = null;
        while (connected == null) {
            try {
                connected = client.connect(ByteArrayCodec.INSTANCE, uri());
            } catch (RuntimeException e) {
                if (System.nanoTime() > end || !proc.isAlive()) {
                    proc.destroyForcibly();
                    throw new IllegalStateException("redis-server on port " + port + " did not start", e);
                }
                Thread.sleep(20);
            }
        }
        conn = connected;
        raw = connected.sync();
    }

    private Process spawn() throws java.io.IOException {
        return new ProcessBuilder(bin, "--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    }

    /**
     * Restarts the server on the same port: no persistence, so it comes
     * back empty (a lost fence counter, say). {@link #raw} reconnects.
     */
    void restart() throws Exception {
        proc.destroy();
        proc.waitFor();
        proc = spawn();
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            try {
                raw.ping();
                return;
            } catch (RuntimeException e) {
                if (System.nanoTime() > end || !proc.isAlive()) {
                    throw new IllegalStateException("redis-server on port " + port + " did not restart", e);
                }
                Thread.sleep(20);
            }
        }
    }

    private static String find() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            File file = new File(dir, "redis-server");
            if (file.canExecute()) {
                return file.getPath();
            }
        }
        throw new AssertionError(INSTALL);
    }

    /** Sends sig (STOP, CONT) to the server: a pause, as a stalled host. */
    void signal(String sig) throws Exception {
        int exitCode = new ProcessBuilder("kill", "-" + sig, Long.toString(proc.pid())).inheritIO().start().waitFor();
        if (exitCode != 0) {
            throw new IllegalStateException("kill -" + sig + " failed");
        }
    }

    RedisURI uri() {
        return RedisURI.create("127.0.0.1", port);
    }

    Redis redis() {
        return Redis.of(uri());
    }

    static byte[] b(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    String get(String key) {
        byte[] value = raw.get(b(key));
        return value == null ? null : new String(value, StandardCharsets.UTF_8);
    }

    /** Sets the namespace's phase as the controller does (phase_set.lua: init, then steps). */
    void setPhase(String namespace, String seen, Phase to, String mode) {
        Namespace keys = new Namespace(namespace);
        Script script = Scripts.get("migrate/scripts/phase_set.lua");
        Object reply = raw.eval(script.source(), io.lettuce.core.ScriptOutputType.INTEGER,
                new byte[][] {keys.phase, keys.channel, keys.since, keys.meta, keys.mark, keys.pending, keys.clients,
                keys.sighting, keys.fleet}, b(seen), b(to.wireName()), b("PUBLISH"), b("0"), b(mode), b("0"), b("0"));
        if (!Long.valueOf(1).equals(reply)) {
            throw new IllegalStateException("phase_set: " + reply);
        }
    }

    @Override
    public void close() {
        conn.close();
        client.shutdown();
        proc.destroy();
        try {
            proc.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
